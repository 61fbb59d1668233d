import { pendingFires, stopHit, trailedStop } from '../../src/domain/engine/rules';
import { dec } from '../../src/platform/decimal';

const P = 1.1; // every trigger, limit, sl and tp below sits at 1.1
const POINT = 0.00001;
/** A quote whose relevant side (ask for buys, bid for sells) is `price`, spread 2 points. */
const askAt = (price: number) => ({ bid: dec(price).minus(2 * POINT), ask: dec(price) });
const bidAt = (price: number) => ({ bid: dec(price), ask: dec(price).plus(2 * POINT) });

describe('pending orders fire exactly at their trigger', () => {
  // cmd, name, which side it watches, fires when the side is at/above (up) or at/below (down) the trigger
  const cases: Array<[number, string, 'ask' | 'bid', 'up' | 'down']> = [
    [2, 'buy limit', 'ask', 'down'],
    [3, 'sell limit', 'bid', 'up'],
    [4, 'buy stop', 'ask', 'up'],
    [5, 'sell stop', 'bid', 'down'],
    [6, 'buy stop limit (trigger)', 'ask', 'up'],
    [7, 'sell stop limit (trigger)', 'bid', 'down'],
  ];
  test.each(cases)('cmd %i (%s) against the %s: at, a point before and a point after', (cmd, _name, side, dir) => {
    const q = side === 'ask' ? askAt : bidAt;
    const before = dir === 'up' ? P - POINT : P + POINT;
    const after = dir === 'up' ? P + POINT : P - POINT;
    expect(pendingFires(cmd, 'pending', dec(P), dec(P), q(P))).toBe(true);
    expect(pendingFires(cmd, 'pending', dec(P), dec(P), q(before))).toBe(false);
    expect(pendingFires(cmd, 'pending', dec(P), dec(P), q(after))).toBe(true);
    // The other side of the quote never decides: moved alone past the trigger, nothing fires.
    const otherOnly = side === 'ask' ? { bid: dec(after), ask: dec(before) } : { bid: dec(before), ask: dec(after) };
    if (dec(otherOnly.bid).lt(otherOnly.ask)) expect(pendingFires(cmd, 'pending', dec(P), dec(P), otherOnly)).toBe(false);
  });

  test.each([
    [6, 'triggered buy stop limit rests as a buy limit at limit_price', 'ask', 'down'],
    [7, 'triggered sell stop limit rests as a sell limit at limit_price', 'bid', 'up'],
  ] as const)('cmd %i: %s', (cmd, _name, side, dir) => {
    const q = side === 'ask' ? askAt : bidAt;
    const trigger = dec(dir === 'down' ? 2 : 0.5); // far away: only the limit price counts now
    expect(pendingFires(cmd, 'triggered', trigger, dec(P), q(P))).toBe(true);
    expect(pendingFires(cmd, 'triggered', trigger, dec(P), q(dir === 'down' ? P + POINT : P - POINT))).toBe(false);
    expect(pendingFires(cmd, 'triggered', trigger, dec(P), q(dir === 'down' ? P - POINT : P + POINT))).toBe(true);
  });
});

describe('sl and tp: buys close at the bid, sells at the ask', () => {
  test('a buy: bid <= sl is sl, bid >= tp is tp', () => {
    expect(stopHit(0, dec(P), null, bidAt(P))).toBe('sl');
    expect(stopHit(0, dec(P), null, bidAt(P + POINT))).toBeNull();
    expect(stopHit(0, dec(P), null, bidAt(P - POINT))).toBe('sl');
    expect(stopHit(0, null, dec(P), bidAt(P))).toBe('tp');
    expect(stopHit(0, null, dec(P), bidAt(P - POINT))).toBeNull();
    // The ask at the level does not close a buy.
    expect(stopHit(0, null, dec(P), askAt(P))).toBeNull();
  });
  test('a sell: ask >= sl is sl, ask <= tp is tp', () => {
    expect(stopHit(1, dec(P), null, askAt(P))).toBe('sl');
    expect(stopHit(1, dec(P), null, askAt(P - POINT))).toBeNull();
    expect(stopHit(1, dec(P), null, askAt(P + POINT))).toBe('sl');
    expect(stopHit(1, null, dec(P), askAt(P))).toBe('tp');
    expect(stopHit(1, null, dec(P), askAt(P + POINT))).toBeNull();
    expect(stopHit(1, null, dec(P), bidAt(P))).toBeNull();
  });
});

describe('trailing stops move sl only forward', () => {
  test('a buy: sl follows the bid at the distance, never back', () => {
    expect(trailedStop(0, null, dec(0.001), bidAt(1.102))!.toNumber()).toBe(1.101);
    expect(trailedStop(0, dec(1.101), dec(0.001), bidAt(1.103))!.toNumber()).toBe(1.102);
    expect(trailedStop(0, dec(1.102), dec(0.001), bidAt(1.1025))).toBeNull();
    expect(trailedStop(0, dec(1.102), dec(0.001), bidAt(1.103))).toBeNull();
  });
  test('a sell: sl follows the ask at the distance, never back', () => {
    expect(trailedStop(1, null, dec(0.001), askAt(1.098))!.toNumber()).toBe(1.099);
    expect(trailedStop(1, dec(1.099), dec(0.001), askAt(1.097))!.toNumber()).toBe(1.098);
    expect(trailedStop(1, dec(1.098), dec(0.001), askAt(1.0975))).toBeNull();
    expect(trailedStop(1, dec(1.098), dec(0.001), askAt(1.097))).toBeNull();
  });
});
