import { Migration } from '@mikro-orm/migrations';
import { sqlFunction } from '../functions/sql-function';
import { STEPS_WITH_HELD } from './Migration20261127140000_WebhookClaimAhead';

/**
 * Every attempt of a webhook delivery is written by one stored function,
 * `webhook_attempts_record`: the delivery loop calls it for its successes and for the attempt of
 * a worker that stopped mid-request, and the deliverer for a failed send, where each used to
 * write the row its own way. The loop's signature is unchanged, so a worker of the previous
 * release keeps working during a rolling deploy.
 */
export class Migration20261128124500_WebhookAttemptsOnePlace extends Migration {
  override async up(): Promise<void> {
    this.addSql(sqlFunction('webhook_attempts_record'));
    this.addSql(sqlFunction('webhook_delivery_steps'));
  }

  override async down(): Promise<void> {
    this.addSql(STEPS_WITH_HELD);
    this.addSql('drop function if exists webhook_attempts_record(jsonb);');
  }
}
