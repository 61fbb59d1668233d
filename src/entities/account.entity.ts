import { type Ref } from '@mikro-orm/core';
import { Check, Entity, Enum, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import { bigintText, decimalText, MONEY_COLUMN } from './column-types';
import { Customer } from './customer.entity';
import { Group } from './group.entity';

export const ACCOUNT_KINDS = ['wallet', 'live', 'demo', 'prop'] as const;
export type AccountKind = (typeof ACCOUNT_KINDS)[number];

/**
 * Where a customer's money lives. `login` is the integer traders know, drawn from the
 * `account_login_seq` sequence. Invariant: balance = the sum of the account's ledger rows of
 * bucket `balance` (and credit of bucket `credit`);
 * `reserved` is what pending withdrawals hold back and is not withdrawable. A wallet may fall
 * below zero, and below its reserve, only by a payment provider's charge-back or refund; the
 * posting path then lets nothing leave it (src/domain/money/negative-wallet.ts).
 */
@Entity({ tableName: 'accounts' })
@Check({
  name: 'accounts_reserved_not_negative',
  expression: `reserved >= 0`,
})
@Check({
  name: 'accounts_credit_not_negative',
  expression: `credit >= 0`,
})
@Index({ properties: ['customer', 'kind'] })
@Index({ properties: ['group'] })
@Index({
  name: 'accounts_one_wallet_per_customer',
  expression: `create unique index "accounts_one_wallet_per_customer" on "accounts" ("customer_id") where "kind" = 'wallet'`,
})
export class Account extends BaseEntity<
  'login' | 'reserved' | 'balance' | 'credit' | 'leverage' | 'group' | 'tradingDisabled' | 'marginCallActive'
> {
  @Property({ type: bigintText(), columnType: 'bigint', defaultRaw: "nextval('account_login_seq')" })
  @Unique()
  login!: string;

  @ManyToOne({ entity: () => Customer, ref: true, deleteRule: 'restrict' })
  customer!: Ref<Customer>;

  @Enum({ items: [...ACCOUNT_KINDS], type: 'string' })
  kind!: AccountKind;

  /** Trading accounts trade under a group; the wallet has none. */
  @ManyToOne({ entity: () => Group, ref: true, nullable: true, deleteRule: 'restrict' })
  group?: Ref<Group> | null = null;

  @Property({ type: 'string', length: 3 })
  currency!: string;

  /** Overrides the group's default leverage when set. */
  @Property({ type: 'integer', nullable: true })
  leverage?: number | null = null;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  balance: string = '0';

  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  reserved: string = '0';

  /**
   * The non-withdrawable bucket (a bonus, a broker's credit): it counts in equity, so it can
   * carry margin and absorb nothing else; losses hit the balance, and it becomes balance only
   * by a bonus release. Invariant: credit = the sum of the account's ledger rows of bucket
   * `credit`, never below zero.
   */
  @Property({ type: decimalText(), columnType: MONEY_COLUMN, default: 0 })
  credit: string = '0';

  /** Set by a risk rule's `disable_trading` action: new orders on the account are refused (403 TRADING_DISABLED). */
  @Property({ type: 'boolean', default: false })
  tradingDisabled: boolean = false;

  /**
   * The engine's memory of a margin call: set when the level falls below the group's call
   * level (one account.margin_call per crossing), cleared when it recovers. Written with SQL by
   * src/domain/engine/engine.ts; mapped so schema diffs know the column.
   */
  @Property({ type: 'boolean', default: false })
  marginCallActive: boolean = false;
}
