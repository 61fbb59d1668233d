import { Migration } from '@mikro-orm/migrations';
import { sqlFunction } from '../functions/sql-function';
import { WAITS_FOR_LEASE_STEP } from './Migration20261123200000_WebhookStepWaitsForLease';

/**
 * - customers.affiliate_id: the affiliate a customer came through; a webhook with an
 *   affiliate_id receives only events about that affiliate's customers.
 * - webhooks.previous_secret_*: after a rotation the old secret signs too, for 24 hours, so a
 *   receiver can switch keys without losing a delivery.
 * - risk_run_items.before_*: what an apply run found on each account before it acted (its
 *   group and whether trading was disabled), so a dealer can see what it changed and undo it.
 *   Null on runs recorded before this migration: their earlier state is unknown.
 * - webhook_delivery_step puts each event's `sequence` (its place in write order) in the body.
 */
export class Migration20261127050000_LooseEnds extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "customers" add column "affiliate_id" varchar(255) null;`);
    this.addSql(
      `alter table "webhooks" add column "previous_secret_sealed" text null, add column "previous_secret_expires_at" timestamptz null;`,
    );
    this.addSql(
      `alter table "risk_run_items" add column "before_group_id" uuid null, add column "before_trading_disabled" boolean null;`,
    );
    this.addSql(sqlFunction('webhook_delivery_step'));
  }

  override async down(): Promise<void> {
    this.addSql(WAITS_FOR_LEASE_STEP);
    this.addSql(`alter table "risk_run_items" drop column "before_group_id", drop column "before_trading_disabled";`);
    this.addSql(`alter table "webhooks" drop column "previous_secret_sealed", drop column "previous_secret_expires_at";`);
    this.addSql(`alter table "customers" drop column "affiliate_id";`);
  }
}
