import { type Ref } from '@mikro-orm/core';
import { Check, Entity, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Account } from './account.entity';
import { BaseEntity } from './base.entity';
import { bigintText, decimalText, MONEY_COLUMN } from './column-types';
import { Customer } from './customer.entity';

/**
 * A completed transfer between two accounts of one customer (endpoint 12). Written once, in
 * the transaction that books its two ledger legs, and never changed. `id` is the
 * `transfer_out_id`: the id of the debit's ledger row in the source account; `transferInId` is
 * the id of the credit's row in the target account; both rows name the transfer
 * (reference_type `transfer`, reference_id = id).
 *
 * Invariant: convertedAmount = amount x rateMultiplier / rateDivisor, rounded toward zero to 2
 * decimals once (the dealer side of the quotes named in `source`; both 1 for `identity`).
 */
@Entity({ tableName: 'transfers' })
@Check({
  name: 'transfers_positive',
  expression: 'amount > 0 and converted_amount > 0 and rate_multiplier > 0 and rate_divisor > 0',
})
@Check({ name: 'transfers_two_accounts', expression: 'from_account_id <> to_account_id' })
@Index({ properties: ['customer', 'createdAt'] })
export class Transfer extends BaseEntity {
  @Property({ type: 'uuid' })
  @Unique()
  transferInId!: string;

  @ManyToOne({ entity: () => Customer, ref: true, deleteRule: 'restrict' })
  customer!: Ref<Customer>;

  @ManyToOne({ entity: () => Account, ref: true, deleteRule: 'restrict' })
  fromAccount!: Ref<Account>;

  @ManyToOne({ entity: () => Account, ref: true, deleteRule: 'restrict' })
  toAccount!: Ref<Account>;

  @Property({ type: bigintText(), columnType: 'bigint' })
  fromLogin!: string;

  @Property({ type: bigintText(), columnType: 'bigint' })
  toLogin!: string;

  /** Debited from the source, in its currency. */
  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  amount!: string;

  @Property({ type: 'string', length: 3 })
  fromCurrency!: string;

  /** Credited to the target, in its currency. */
  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  convertedAmount!: string;

  @Property({ type: 'string', length: 3 })
  toCurrency!: string;

  /** The symbol(s) whose quotes converted it, or `identity`. */
  @Property({ type: 'string', length: 80 })
  source!: string;

  /** The product of the bids used (exact decimal, no scale limit). */
  @Property({ type: decimalText(), columnType: 'numeric' })
  rateMultiplier!: string;

  /** The product of the asks used. */
  @Property({ type: decimalText(), columnType: 'numeric' })
  rateDivisor!: string;
}
