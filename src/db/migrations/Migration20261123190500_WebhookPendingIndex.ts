import { Migration } from '@mikro-orm/migrations';

/**
 * Every lookup of open deliveries starts from a webhook: the delivery step claims the
 * webhook's first open delivery in event order, and the once-a-second sweep asks, per active
 * webhook, whether one is open or due. The index on next_attempt_at alone served none of
 * them (they fell back to the webhook's whole delivery history); this one serves all three.
 */
export class Migration20261123190500_WebhookPendingIndex extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop index if exists "webhook_deliveries_pending_index";`);
    this.addSql(
      `create index "webhook_deliveries_pending_index" on "webhook_deliveries" ("webhook_id", "first_event_seq") where "status" = 'pending';`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "webhook_deliveries_pending_index";`);
    this.addSql(
      `create index "webhook_deliveries_pending_index" on "webhook_deliveries" ("next_attempt_at") where "status" = 'pending';`,
    );
  }
}
