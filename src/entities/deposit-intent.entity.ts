import { type Ref } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { Account } from './account.entity';
import { BaseEntity } from './base.entity';
import { bigintText, decimalText, MONEY_COLUMN } from './column-types';
import { Customer } from './customer.entity';
import { Integration } from './integration.entity';

export const DEPOSIT_STATUSES = [
  'pending',
  'processing',
  'review',
  'completed',
  'failed',
  'expired',
  'cancelled',
  'refunded',
  'charged_back',
] as const;
export type DepositStatus = (typeof DEPOSIT_STATUSES)[number];

/**
 * A customer's deposit through a payment provider, from the request to the provider's last
 * word. The money is credited in the one transaction that moves it to `completed` (its ledger
 * row references the intent and is unique on it); a reversal books a negative row referencing
 * it too.
 */
@Entity({ tableName: 'deposit_intents' })
@Index({ properties: ['customer', 'createdAt'] })
@Index({ properties: ['status', 'createdAt'] })
@Index({
  name: 'deposit_intents_open_expiry',
  expression: `create index "deposit_intents_open_expiry" on "deposit_intents" ("expires_at") where "status" in ('pending', 'processing')`,
})
export class DepositIntent extends BaseEntity<
  | 'status'
  | 'externalId'
  | 'redirectUrl'
  | 'review'
  | 'reason'
  | 'creditedAmount'
  | 'creditedCurrency'
  | 'decidedAt'
  | 'decidedBy'
  | 'instrumentFingerprint'
> {
  @ManyToOne({ entity: () => Integration, ref: true, deleteRule: 'restrict' })
  provider!: Ref<Integration>;

  @ManyToOne({ entity: () => Customer, ref: true, deleteRule: 'restrict' })
  customer!: Ref<Customer>;

  @ManyToOne({ entity: () => Account, ref: true, deleteRule: 'restrict' })
  account!: Ref<Account>;

  @Property({ type: bigintText(), columnType: 'bigint' })
  login!: string;

  /** What the customer asked to pay, in `currency` (the provider's currency, not necessarily the account's). */
  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  amount!: string;

  @Property({ type: 'string', length: 3 })
  currency!: string;

  @Property({ type: 'string', length: 16 })
  status: DepositStatus = 'pending';

  /** The provider's id of the payment, from its first callback. */
  @Property({ type: 'string', length: 128, nullable: true })
  externalId?: string | null = null;

  @Property({ type: 'string', length: 2048, nullable: true })
  redirectUrl?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  expiresAt!: Date;

  /** Why it is in review: `{"expected": {amount, currency}, "received": {amount, currency}}`. */
  @Property({ type: 'json', nullable: true })
  review?: Record<string, unknown> | null = null;

  @Property({ type: 'string', length: 500, nullable: true })
  reason?: string | null = null;

  /** What the account was credited, in its own currency: what a reversal takes back. */
  @Property({ type: decimalText(), columnType: MONEY_COLUMN, nullable: true })
  creditedAmount?: string | null = null;

  @Property({ type: 'string', length: 3, nullable: true })
  creditedCurrency?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  decidedAt?: Date | null = null;

  /** The staff user who approved or rejected it from review. */
  @Property({ type: 'uuid', nullable: true })
  decidedBy?: string | null = null;

  @Property({ type: 'string', length: 128, nullable: true })
  instrumentFingerprint?: string | null = null;
}
