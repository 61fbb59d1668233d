import { Migration } from '@mikro-orm/migrations';

/**
 * A customer's timeline reads its events newest first: without this index that is a scan of
 * the whole outbox for every page. Outside a transaction, so the index on this large table is
 * built CONCURRENTLY (see docs/operations.md); safe to run again.
 */
export class Migration20261128110100_CustomerEventsIndex extends Migration {
  override isTransactional(): boolean {
    return false;
  }

  override async up(): Promise<void> {
    this.addSql(
      'create index concurrently if not exists "domain_events_customer_created_index" on "domain_events" ("customer_id", "created_at") where "customer_id" is not null;',
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists "domain_events_customer_created_index";');
  }
}
