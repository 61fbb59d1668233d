import { Migration } from '@mikro-orm/migrations';

/**
 * The publication range of each kept delivery, indexed: retention asks, for every event it
 * would delete, whether a kept delivery's range holds it (the delivery then still needs its
 * body). Outside a transaction, so the index on this large table is built CONCURRENTLY (see
 * docs/operations.md); safe to run again.
 */
export class Migration20261128223100_WebhookDeliveryRanges extends Migration {
  override isTransactional(): boolean {
    return false;
  }

  override async up(): Promise<void> {
    this.addSql(
      `create index concurrently if not exists "webhook_deliveries_events_index" on "webhook_deliveries"
         using gist (int8range("first_publication_seq", "last_publication_seq", '[]'));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop index concurrently if exists "webhook_deliveries_events_index";');
  }
}
