import { type Ref } from '@mikro-orm/core';
import { Check, Entity, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Account } from './account.entity';
import { BaseEntity } from './base.entity';
import { bigintText, decimalText, MONEY_COLUMN } from './column-types';

export const LEDGER_KINDS = [
  'deposit',
  'withdrawal',
  'transfer_in',
  'transfer_out',
  'trade_profit',
  'commission',
  'swap',
  'negative_balance_compensation',
  'payout',
  'adjustment',
  'challenge_funding',
  'chargeback',
  'deposit_refund',
  'credit_in',
  'credit_out',
  'bonus_release',
  'ib_reward',
  'ib_reward_reversal',
] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

/**
 * Which of the account's two sums a row moves: `balance` (withdrawable money) or `credit`
 * (the non-withdrawable bucket). Each bucket is the sum of its rows, and a row's
 * `balance_after` is what its own bucket holds after it.
 */
export const LEDGER_BUCKETS = ['balance', 'credit'] as const;
export type LedgerBucket = (typeof LEDGER_BUCKETS)[number];

/**
 * One balance change. Append-only (a trigger refuses UPDATE and DELETE) and written in the
 * same transaction as the balance it changes: an account's balance is the sum of its rows.
 */
@Entity({ tableName: 'ledger_entries' })
@Check({ name: 'ledger_entries_bucket_known', expression: `bucket in ('balance', 'credit')` })
@Index({ properties: ['account', 'seq'] })
@Index({ properties: ['referenceType', 'referenceId'] })
// A provider's payment is credited once: one deposit row per intent, whatever retries or races do.
@Index({
  name: 'ledger_entries_one_deposit_per_intent',
  expression: `create unique index "ledger_entries_one_deposit_per_intent" on "ledger_entries" ("reference_id") where "kind" = 'deposit' and "reference_type" = 'deposit_intent'`,
})
export class LedgerEntry extends BaseEntity<'seq' | 'comment' | 'referenceType' | 'referenceId' | 'bucket'> {
  /**
   * Booking order: drawn from a sequence while the account row is locked, so an account's
   * rows are numbered in the order they were booked, and balance_after chains from row to
   * row in that order (created_at cannot: rows of one transaction share it).
   */
  @Property({ type: bigintText(), columnType: 'bigint', defaultRaw: "nextval('ledger_booking_seq')" })
  @Unique()
  seq!: string;

  @ManyToOne({ entity: () => Account, ref: true, deleteRule: 'restrict' })
  account!: Ref<Account>;

  @Property({ type: 'string', length: 32 })
  kind!: LedgerKind;

  @Property({ type: 'string', length: 16, default: 'balance' })
  bucket: LedgerBucket = 'balance';

  /** Signed, in the account's currency, 2 decimals. */
  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  amount!: string;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  balanceAfter!: string;

  /** What caused it: an order ticket, a deposit id, a transfer... */
  @Property({ type: 'string', length: 32, nullable: true })
  referenceType?: string | null = null;

  @Property({ type: 'string', length: 64, nullable: true })
  referenceId?: string | null = null;

  @Property({ type: 'string', length: 500, nullable: true })
  comment?: string | null = null;
}
