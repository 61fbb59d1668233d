import { D, dec, type Dec } from './decimal';
import { errors, fieldError, type AppError } from './errors';

/**
 * The bounds that keep every booking inside its money column. Money columns (balances,
 * reserves, ledger amounts, profits) are numeric(38,2): |x| < 10^36.
 *
 * Inputs, each refused at the edge with a 422 when out of bounds:
 *   - a price P (quote bid/ask, sl, tp, trigger, limit): 10^-6 <= P <= 10^7;
 *     a group's spread (at most 100,000 points) widens a quote by at most 50,000, so a
 *     price an order opens or closes at is at most 1.005 * 10^7 < 2 * 10^7;
 *   - an instrument's contract_size C: 0 < C <= 10^6;
 *   - an order's volume V: 0.01 <= V <= 10^3 lots.
 *
 * One order: |profit in its quote currency| = |close - open| * V * C
 *   <= 2 * 10^7 * 10^3 * 10^6 = 2 * 10^16.
 * Into the account currency it converts through at most two legs (direct, inverted, or
 * crossed through USD), each a mid quote m or 1/m with 10^-6 <= m <= 10^7, so a leg is at
 * most 10^7 and the rate at most 10^14 (written 4 * 10^14 below, spread included):
 *   one booking W <= 2 * 10^16 * 4 * 10^14 = 8 * 10^30.
 * A commission is charged on each side, open and close. Its value is at most
 * COMMISSION_VALUE_MAX = 50: per_lot 50 x 10^3, per_deal 50, percent 50 % of a notional
 * bounded like the profit above (price x V x C, converted), so one side is at most
 * 4 * 10^30, and an order books at most W + 2 * 4 * 10^30 = 1.6 * 10^31 over its life.
 *
 * One account: a credit (deposit, transfer in, payout) and a new order both need the
 * balance within MAX_BALANCE = 10^30 first, and an account holds at most MAX_POSITIONS =
 * 10,000 open and pending orders. Each order books its profit and two commissions, so
 * however its orders close,
 *   |balance| <= 10^30 + 10^4 * 1.6 * 10^31 = 1.60001 * 10^35 < 10^36.
 * An order is therefore refused when it opens (or a pending order placed), never found
 * unclosable later; test/unit/money-bounds.test.ts recomputes this from the constants.
 */
export const PRICE_MIN = 0.000001;
export const PRICE_MAX = 10_000_000;
export const SPREAD_POINTS_MAX = 100_000;
export const CONTRACT_SIZE_MAX = 1_000_000;
export const VOLUME_MIN = 0.01;
export const VOLUME_MAX = 1000;
export const MAX_POSITIONS = 10_000;
/** The largest commission_value a group or group instrument row may set (money per lot or deal, or a percentage). */
export const COMMISSION_VALUE_MAX = 50;
export const MAX_BALANCE = new D('1e30');
/** What a numeric(38,2) column holds: strictly less than this in magnitude. */
export const MONEY_COLUMN_LIMIT = new D('1e36');
/** The largest single deposit or transfer amount. */
export const AMOUNT_MAX = 1_000_000_000_000;

/** A credit that would take the balance past MAX_BALANCE is refused, at the amount field. */
export function assertCreditFits(balance: Dec | string, amount: Dec, field: Array<string | number> = ['amount']): void {
  if (dec(balance).plus(amount).abs().gt(MAX_BALANCE))
    throw fieldError(
      'body',
      field,
      `This credit would take the balance past the largest an account may hold (${MAX_BALANCE.toExponential()})`,
    );
}

/**
 * A new order (market or pending) needs the balance within MAX_BALANCE and room for one more
 * position: `positions` counts the account's open orders and its pending and triggered ones.
 */
export function assertCanOpen(balance: Dec | string, positions: number): void {
  const refusal = openRefusal(balance, positions);
  if (refusal) throw refusal;
}

/** Why assertCanOpen refuses, as a value (a pending order's fill is cancelled with it), or null. */
export function openRefusal(balance: Dec | string, positions: number): AppError | null {
  if (positions >= MAX_POSITIONS)
    return errors.conflict('POSITION_LIMIT_REACHED', `An account holds at most ${MAX_POSITIONS} open and pending orders`);
  if (dec(balance).abs().gt(MAX_BALANCE))
    return errors.conflict('BALANCE_LIMIT_REACHED', 'The balance is beyond what a new order may be booked against');
  return null;
}
