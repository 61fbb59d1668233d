import type { RunBound } from '../../db/bound-transaction';
import { D, dec, type Dec } from '../../platform/decimal';
import { fieldError, type ValidationFailure } from '../../platform/errors';
import { CurrencyConverter } from '../prices/conversion';
import type { QuoteStore } from '../prices/quote-store';
import { BUY } from '../prices/trading-math';
import { EXPOSURE_LOCK_CLASS, GROUP_EXPOSURE, LOCK_GROUP_EXPOSURE } from './orders.queries';

/** The group's exposure limit and the order that would add to it. */
export interface ExposureCheck {
  groupId: string;
  /** The group's currency: the limit's. */
  currency: string;
  max: Dec;
  /** net_max_exposure: a symbol counts |long - short|, else long + short. */
  net: boolean;
  order: { symbol: string; cmd: 0 | 1; volume: Dec; contractSize: Dec; price: Dec; quoteCurrency: string };
}

interface SymbolExposure {
  symbol: string;
  quote_currency: string;
  long_units: string;
  short_units: string;
  open_price: string | null;
}

/**
 * A group's exposure is the sum over its open orders of volume x contract size x
 * current price, in the group's currency (per symbol |long - short| when net). The caller
 * holds the account row locked; this takes the group's exposure lock next, so opens in the
 * group take turns and each sees the ones before it. Current price is the raw quote's mid
 * (the group's spread widens both sides alike), converted at mid like a profit; a symbol with
 * no quote counts at its orders' volume-weighted open price. An open is refused (422 at
 * volume) when it would take the exposure past the limit; one that does not raise it (a hedge
 * under net exposure) never is, even above the limit, and closing is never refused. `run`
 * sends the statements on the open's transaction.
 */
export async function exposureRefusal(
  run: RunBound,
  quotes: QuoteStore,
  check: ExposureCheck,
): Promise<ValidationFailure | null> {
  await run(LOCK_GROUP_EXPOSURE.bind({ lock_class: EXPOSURE_LOCK_CLASS, group_id: check.groupId }));
  const rows = await run<SymbolExposure>(GROUP_EXPOSURE.bind({ group_id: check.groupId }));
  const { order } = check;
  if (!rows.some((r) => r.symbol === order.symbol))
    rows.push({ symbol: order.symbol, quote_currency: order.quoteCurrency, long_units: '0', short_units: '0', open_price: null });
  const [prices, converter] = await Promise.all([
    quotes.getMany(rows.map((r) => r.symbol)),
    CurrencyConverter.joiningInstruments(run, [check.currency, ...rows.map((r) => r.quote_currency)]).then((joining) =>
      CurrencyConverter.priced(joining, quotes),
    ),
  ]);
  const units = order.volume.times(order.contractSize);
  let before = new D(0);
  let after = new D(0);
  for (const r of rows) {
    const q = prices.get(r.symbol);
    const price = q ? dec(q.bid).plus(dec(q.ask)).div(2) : r.symbol === order.symbol ? order.price : dec(r.open_price ?? 0);
    const rate = converter.rate(r.quote_currency, check.currency);
    if (!rate)
      return fieldError(
        'body',
        ['volume'],
        `The group's exposure cannot be valued: no quote converts ${r.quote_currency} into ${check.currency}`,
      );
    const long = dec(r.long_units);
    const short = dec(r.short_units);
    const mine = r.symbol === order.symbol;
    const longAfter = mine && order.cmd === BUY ? long.plus(units) : long;
    const shortAfter = mine && order.cmd !== BUY ? short.plus(units) : short;
    const value = (l: Dec, s: Dec) => (check.net ? l.minus(s).abs() : l.plus(s)).times(price).times(rate.rate);
    before = before.plus(value(long, short));
    after = after.plus(value(longAfter, shortAfter));
  }
  if (after.gt(check.max) && after.gt(before))
    return fieldError(
      'body',
      ['volume'],
      `The group's exposure would reach ${after.toFixed(2)} ${check.currency}, above its limit of ${check.max.toFixed(2)}`,
    );
  return null;
}
