import {
  COMMISSION_VALUE_MAX,
  CONTRACT_SIZE_MAX,
  MAX_BALANCE,
  MAX_POSITIONS,
  MONEY_COLUMN_LIMIT,
  PRICE_MAX,
  PRICE_MIN,
  SPREAD_POINTS_MAX,
  VOLUME_MAX,
} from '../../src/platform/bounds';
import { D } from '../../src/platform/decimal';

/** Recomputes the argument of domain/money/primitives/bounds.ts from its constants, so a changed bound cannot break it silently. */
describe('money bounds', () => {
  // A group's spread widens a quote by half its points; at digits 0 a point is 1.
  const widestPrice = new D(PRICE_MAX).plus(new D(SPREAD_POINTS_MAX).div(2));
  const worstQuoteProfit = widestPrice.times(VOLUME_MAX).times(CONTRACT_SIZE_MAX);
  // A conversion leg is a mid quote or its inverse; at most two legs (crossed through USD).
  const worstLeg = D.max(new D(PRICE_MAX), new D(1).div(PRICE_MIN));
  const worstBooking = worstQuoteProfit.times(worstLeg.pow(2));

  test('when one order books its worst case, then it is below 8 * 10^30 as the comment says', () => {
    expect(worstQuoteProfit.lte('2e16')).toBe(true);
    expect(worstLeg.pow(2).lte('4e14')).toBe(true);
    expect(worstBooking.lte('8e30')).toBe(true);
  });

  // A commission side: per_lot value x volume, per_deal value, or percent value / 100 of the notional (price x V x C, converted).
  const worstCommission = D.max(
    new D(COMMISSION_VALUE_MAX).times(VOLUME_MAX),
    worstQuoteProfit.times(worstLeg.pow(2)).times(COMMISSION_VALUE_MAX).div(100),
  );
  // Its profit, and a commission on the open and on the close.
  const worstOrder = worstBooking.plus(worstCommission.times(2));

  test('when one side of an order is charged its worst commission, then it is below 4 * 10^30 as the comment says', () => {
    expect(worstCommission.lte('4e30')).toBe(true);
    expect(worstOrder.lte('1.6e31')).toBe(true);
  });

  test('when every allowed position of an account books its worst case, then the balance still fits numeric(38,2)', () => {
    const worstBalance = MAX_BALANCE.plus(worstOrder.times(MAX_POSITIONS));
    expect(worstBalance.lt(MONEY_COLUMN_LIMIT)).toBe(true);
    // and with room to spare: two decimals of a 38-digit column leave 36 before the point
    expect(worstBalance.precision(true) + 2).toBeLessThanOrEqual(38);
  });
});
