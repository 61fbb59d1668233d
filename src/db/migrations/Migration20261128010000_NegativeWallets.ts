import { Migration } from '@mikro-orm/migrations';

/**
 * A wallet may now fall below zero, and below what it reserves: a payment provider's
 * charge-back or refund is booked whatever the wallet holds, because the money has already
 * gone back to the payer. The overdraft defence moves to the posting path, which refuses any
 * withdrawal or transfer out of a wallet below zero and checks every debit against what is not
 * reserved; the database keeps refusing a negative reserve.
 */
export class Migration20261128010000_NegativeWallets extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "accounts" drop constraint accounts_reserved_within_balance;`);
    this.addSql(`alter table "accounts" add constraint accounts_reserved_not_negative check(reserved >= 0);`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "accounts" drop constraint accounts_reserved_not_negative;`);
    this.addSql(
      `alter table "accounts" add constraint accounts_reserved_within_balance check(reserved >= 0 and (kind <> 'wallet' or reserved <= balance));`,
    );
  }
}
