import { Migration } from '@mikro-orm/migrations';
import { sqlFunction } from '../functions/sql-function';
import { Migration20261123173600_WebhookDeliveryStep } from './Migration20261123173600_WebhookDeliveryStep';

/**
 * `webhook_delivery_step` waits while any open delivery of the webhook is leased, not only
 * the oldest. A redelivery reopens an old batch, which sorts first: the old check saw it
 * unleased and due and sent it while a newer batch was still in flight, so one webhook had
 * two requests out at once and a receiver could see events out of order. The function is
 * otherwise the one of migration 20261123173600, which keeps its own text; the current body is
 * src/db/functions/webhook_delivery_step.sql.
 */
export class Migration20261123200000_WebhookStepWaitsForLease extends Migration {
  override async up(): Promise<void> {
    this.addSql(sqlFunction('webhook_delivery_step'));
  }

  override async down(): Promise<void> {
    // Back to the earlier function: that migration's own statement, not a copy of it.
    const previous = new Migration20261123173600_WebhookDeliveryStep(this.driver, this.config);
    await previous.up();
    for (const query of previous.getQueries()) this.addSql(query);
  }
}
