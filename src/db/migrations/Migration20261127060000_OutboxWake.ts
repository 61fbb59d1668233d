import { Migration } from '@mikro-orm/migrations';
import { sqlFunction } from '../functions/sql-function';

/**
 * The outbox wakes its relay as events commit (a statement-level trigger that NOTIFYs
 * `domain_events`), and webhook delivery claims and records many deliveries a call
 * (`webhook_delivery_steps`, which replaces the one-at-a-time `webhook_delivery_step` in the
 * code; the older function stays for a worker of the previous release still running).
 */
export class Migration20261127060000_OutboxWake extends Migration {
  override async up(): Promise<void> {
    this.addSql(sqlFunction('domain_events_notify'));
    this.addSql(
      'create trigger domain_events_notify after insert on "domain_events" for each statement execute function domain_events_notify();',
    );
    this.addSql(sqlFunction('webhook_delivery_steps'));
  }

  override async down(): Promise<void> {
    this.addSql('drop trigger if exists domain_events_notify on "domain_events";');
    this.addSql('drop function if exists domain_events_notify();');
    this.addSql('drop function if exists webhook_delivery_steps(uuid, integer, integer, jsonb, jsonb, boolean);');
  }
}
