import { Migration } from '@mikro-orm/migrations';
import { sqlFunction } from '../functions/sql-function';
import { STEPS_AS_CREATED } from './Migration20261127060000_OutboxWake';

/**
 * `webhook_delivery_steps` takes the deliveries its caller is still sending (`p_held`) and may
 * claim the batches behind them, so a deliverer's next claim runs while its requests are in
 * flight instead of between them; and it reads each claimed delivery's messages by their index
 * and each event by its key to build the bodies, where one join over them could scan the whole
 * messages table (as it did on tables whose statistics lag). The new argument has a default, and the six-argument
 * function is replaced rather than overloaded: a worker of the previous release still
 * running calls it with six arguments and gets the behaviour it had (and two overloads would
 * make that call ambiguous).
 */
export class Migration20261127140000_WebhookClaimAhead extends Migration {
  override async up(): Promise<void> {
    this.addSql('drop function if exists webhook_delivery_steps(uuid, integer, integer, jsonb, jsonb, boolean);');
    this.addSql(sqlFunction('webhook_delivery_steps'));
  }

  override async down(): Promise<void> {
    this.addSql('drop function if exists webhook_delivery_steps(uuid, integer, integer, jsonb, jsonb, boolean, jsonb);');
    this.addSql(STEPS_AS_CREATED);
  }
}
