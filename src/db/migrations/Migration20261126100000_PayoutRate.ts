import { Migration } from '@mikro-orm/migrations';

/**
 * An approved payout keeps the dealer rate it converted at, as a transfer does (the product of
 * the bids used and of the asks used, and the symbols), so the wallet's credit can be
 * recomputed to the cent. Payouts approved before have none: their rate was not recorded.
 */
export class Migration20261126100000_PayoutRate extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "payouts" add column "rate_source" varchar(80) null, add column "rate_multiplier" numeric null, add column "rate_divisor" numeric null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "payouts" drop column "rate_source", drop column "rate_multiplier", drop column "rate_divisor";`);
  }
}
