import { D, dec, type Dec } from '../../platform/decimal';
import type { Quote } from './quote-store';

export const BUY = 0;

/** The price a market order opens at: buy at ask, sell at bid. */
export function openingPrice(cmd: number, quote: { bid: Dec; ask: Dec }): Dec {
  return cmd === BUY ? quote.ask : quote.bid;
}

/** The price a position closes at: a buy sells at bid, a sell buys back at ask. */
export function closingPrice(cmd: number, quote: { bid: Dec; ask: Dec }): Dec {
  return cmd === BUY ? quote.bid : quote.ask;
}

/** Profit in the instrument's quote currency. */
export function profitInQuoteCurrency(cmd: number, openPrice: Dec, closePrice: Dec, volume: Dec, contractSize: Dec): Dec {
  const move = cmd === BUY ? closePrice.minus(openPrice) : openPrice.minus(closePrice);
  return move.times(volume).times(contractSize);
}

/** Margin in the quote currency: notional at `price` over leverage. */
export function marginInQuoteCurrency(volume: Dec, contractSize: Dec, price: Dec, leverage: number): Dec {
  return volume.times(contractSize).times(price).div(leverage);
}

/**
 * A group's spread, in points (10^-digits), widens the raw quote symmetrically: the
 * broker's markup.
 */
export function withSpread(quote: Quote, spreadPoints: Dec, digits: number): { bid: Dec; ask: Dec } {
  const half = spreadPoints.times(new D(10).pow(-digits)).div(2);
  return { bid: dec(quote.bid).minus(half), ask: dec(quote.ask).plus(half) };
}
