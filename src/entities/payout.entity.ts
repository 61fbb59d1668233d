import { type Ref } from '@mikro-orm/core';
import { Check, Entity, Enum, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { Account } from './account.entity';
import { BaseEntity } from './base.entity';
import { bigintText, decimalText, MONEY_COLUMN } from './column-types';
import { Customer } from './customer.entity';

export const PAYOUT_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

/**
 * A payout of a prop account's profit to its customer's wallet. While
 * `pending` its amount is held in the prop account's `reserved`; approving debits the prop
 * account and credits the wallet through the ledger (converted like a transfer), rejecting
 * frees the reserve. `approved` and `rejected` are terminal and each happens at most once.
 */
@Entity({ tableName: 'payouts' })
@Check({ name: 'payouts_amount_positive', expression: 'amount > 0' })
@Check({
  name: 'payouts_decision',
  expression: `(status = 'pending') = (decided_at is null) and (status = 'rejected') = (reason is not null)`,
})
@Index({ properties: ['status', 'createdAt'] })
@Index({ properties: ['login', 'createdAt'] })
@Index({ properties: ['customer', 'createdAt'] })
export class Payout extends BaseEntity<
  | 'status'
  | 'reason'
  | 'decidedAt'
  | 'decidedBy'
  | 'requestedBy'
  | 'walletAmount'
  | 'walletCurrency'
  | 'rateSource'
  | 'rateMultiplier'
  | 'rateDivisor'
  | 'profitSplitPct'
> {
  @ManyToOne({ entity: () => Account, ref: true, deleteRule: 'restrict' })
  account!: Ref<Account>;

  @ManyToOne({ entity: () => Customer, ref: true, deleteRule: 'restrict' })
  customer!: Ref<Customer>;

  /** The prop account's login. */
  @Property({ type: bigintText(), columnType: 'bigint' })
  login!: string;

  /** In the prop account's currency. */
  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  amount!: string;

  @Property({ type: 'string', length: 3 })
  currency!: string;

  @Enum({ items: [...PAYOUT_STATUSES], type: 'string' })
  status: PayoutStatus = 'pending';

  @Property({ type: 'string', length: 500, nullable: true })
  reason?: string | null = null;

  /** The staff user who asked for it; null when the customer did. */
  @Property({ type: 'uuid', nullable: true })
  requestedBy?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  decidedAt?: Date | null = null;

  /** The staff user who decided (for an API token, the user who issued it). */
  @Property({ type: 'uuid', nullable: true })
  decidedBy?: string | null = null;

  /** What the wallet was credited, in its currency, once approved. */
  @Property({ type: decimalText(), columnType: MONEY_COLUMN, nullable: true })
  walletAmount?: string | null = null;

  @Property({ type: 'string', length: 3, nullable: true })
  walletCurrency?: string | null = null;

  /**
   * The conversion, kept as a transfer keeps it, once approved: walletAmount = amount x
   * rateMultiplier / rateDivisor cut toward zero to 2 decimals, at the dealer side of the quotes
   * named in `rateSource` (both 1 for `identity`), so every credit can be recomputed to the cent.
   */
  @Property({ type: 'string', length: 80, nullable: true })
  rateSource?: string | null = null;

  /** The product of the bids used (exact decimal, no scale limit). */
  @Property({ type: decimalText(), columnType: 'numeric', nullable: true })
  rateMultiplier?: string | null = null;

  /** The product of the asks used. */
  @Property({ type: decimalText(), columnType: 'numeric', nullable: true })
  rateDivisor?: string | null = null;

  /**
   * For a funded challenge account, the program's profit split when the payout was asked for:
   * the prop account gives up `amount`, the trader's wallet receives this share of it.
   * Null for other prop accounts, which pay out the whole amount.
   */
  @Property({ type: decimalText(), columnType: 'numeric(5,2)', nullable: true })
  profitSplitPct?: string | null = null;
}
