import { type Ref } from '@mikro-orm/core';
import { Check, Entity, Enum, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { Account } from './account.entity';
import { BaseEntity } from './base.entity';
import { bigintText, decimalText, MONEY_COLUMN } from './column-types';
import { Customer } from './customer.entity';

export const WITHDRAWAL_STATUSES = ['pending', 'completed', 'rejected'] as const;
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];

/**
 * A customer's request to take money out of its wallet (endpoint 13). While `pending` its
 * amount is held in the wallet's `reserved`; staff approve it (`completed`: the wallet is
 * debited through the ledger and the reserve released) or reject it (`rejected`: the reserve
 * released). Both are terminal, and each happens at most once.
 *
 * `paymentData` is where the money goes (bank details, a card token...): stored as given,
 * shown only to staff who approve withdrawals, never written into events, audit rows or logs.
 */
@Entity({ tableName: 'withdrawals' })
@Check({ name: 'withdrawals_amount_positive', expression: 'amount > 0' })
@Check({
  name: 'withdrawals_decision',
  expression: `(status = 'pending') = (decided_at is null) and (status = 'rejected') = (reason is not null)`,
})
@Index({ properties: ['status', 'createdAt'] })
@Index({ properties: ['login', 'createdAt'] })
@Index({ properties: ['customer', 'createdAt'] })
export class Withdrawal extends BaseEntity<'status' | 'comment' | 'reason' | 'decidedAt' | 'decidedBy' | 'reviewReason'> {
  @ManyToOne({ entity: () => Account, ref: true, deleteRule: 'restrict' })
  account!: Ref<Account>;

  @ManyToOne({ entity: () => Customer, ref: true, deleteRule: 'restrict' })
  customer!: Ref<Customer>;

  @Property({ type: bigintText(), columnType: 'bigint' })
  login!: string;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  amount!: string;

  @Property({ type: 'string', length: 3 })
  currency!: string;

  @Enum({ items: [...WITHDRAWAL_STATUSES], type: 'string' })
  status: WithdrawalStatus = 'pending';

  @Property({ type: 'json' })
  paymentData!: Record<string, unknown>;

  @Property({ type: 'string', length: 500, nullable: true })
  comment?: string | null = null;

  /** Why staff rejected it; null otherwise. */
  @Property({ type: 'string', length: 500, nullable: true })
  reason?: string | null = null;

  /** Why a fraud rule held it for review (staff only); null when no rule did. */
  @Property({ type: 'string', length: 200, nullable: true })
  reviewReason?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  decidedAt?: Date | null = null;

  /** The staff user who decided (for an API token, the user who issued it). */
  @Property({ type: 'uuid', nullable: true })
  decidedBy?: string | null = null;
}
