import type { CommissionType } from '../../entities/group.entity';
import { D, dec, money, type Dec } from '../../platform/decimal';

/** A group's commission terms: how it charges, and its value. */
export interface CommissionTerms {
  type: CommissionType;
  /** Decimal text: money in the account currency (per_lot, per_deal) or a percentage (percent). */
  value: string;
}

export const NO_COMMISSION: CommissionTerms = { type: 'none', value: '0' };

/** What one side of a deal is: its volume and the price it trades at. */
export interface Deal {
  volume: Dec;
  contractSize: Dec;
  price: Dec;
}

/**
 * The commission of one side of a deal (an open or a close), as a positive amount in the
 * account currency rounded to the cent: per_lot value x volume, per_deal value, percent
 * value / 100 x notional (volume x contract size x price, converted like a profit by
 * `toAccount`). `override` is the group instrument row's commission_value: when set it
 * replaces the group's value for that symbol, under the group's type. Zero when the group
 * charges none.
 */
export function commissionOf(
  terms: CommissionTerms,
  override: string | null | undefined,
  deal: Deal,
  toAccount: (quoteCurrencyAmount: Dec) => Dec,
): Dec {
  const value = dec(override ?? terms.value);
  if (value.isZero()) return new D(0);
  switch (terms.type) {
    case 'per_lot':
      return money(value.times(deal.volume));
    case 'per_deal':
      return money(value);
    case 'percent':
      return money(toAccount(deal.volume.times(deal.contractSize).times(deal.price)).times(value).div(100));
    default:
      return new D(0);
  }
}
