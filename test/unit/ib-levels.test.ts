import { levelAmounts } from '../../src/domain/partners/accrual';
import { dec } from '../../src/platform/decimal';

const plan = (terms: Partial<Parameters<typeof levelAmounts>[0]> = {}): Parameters<typeof levelAmounts>[0] => ({
  id: 'p',
  currency: 'USD',
  basis: 'commission_pct',
  levels: [
    { level: 1, value: '50' },
    { level: 2, value: '30' },
    { level: 3, value: '20' },
  ],
  max_per_lot: null,
  group_ids: null,
  symbol_overrides: null,
  charge: 'daily',
  min_hold_seconds: 60,
  ...terms,
});

const text = (m: Map<number, ReturnType<typeof dec>>) => Object.fromEntries([...m].map(([k, v]) => [k, v.toFixed(2)]));

test('when a commission of 7.00 is shared 50/30/20, then the levels get 3.50, 2.10 and 1.40', () => {
  expect(text(levelAmounts(plan(), 'EURUSD', dec(2), dec('7.00'), null))).toEqual({ 1: '3.50', 2: '2.10', 3: '1.40' });
});

test('when a share does not fall on a cent, then it is cut down, so the levels never pass the commission', () => {
  const shares = levelAmounts(plan(), 'EURUSD', dec(1), dec('0.05'), null);
  expect(text(shares)).toEqual({ 1: '0.02', 2: '0.01', 3: '0.01' });
  expect([...shares.values()].reduce((s, v) => s.plus(v), dec(0)).lte('0.05')).toBe(true);
});

test('when a symbol has an override, then its levels replace the plan’s, in any letter case of the symbol', () => {
  const p = plan({ symbol_overrides: { XAUUSD: [{ level: 1, value: '10' }] } });
  expect(text(levelAmounts(p, 'xauusd', dec(1), dec('7.00'), null))).toEqual({ 1: '0.70' });
});

test('when a per_lot plan has max_per_lot, then the nearest levels are served first up to the cap', () => {
  const p = plan({
    basis: 'per_lot',
    levels: [
      { level: 1, value: '4' },
      { level: 2, value: '3' },
      { level: 3, value: '2' },
    ],
    max_per_lot: '5.00',
  });
  expect(text(levelAmounts(p, 'EURUSD', dec(2), dec(0), null))).toEqual({ 1: '8.00', 2: '2.00', 3: '0.00' });
});

test('when a spread share has no spread to share, then every level earns 0', () => {
  const p = plan({ basis: 'spread_pct' });
  expect(text(levelAmounts(p, 'EURUSD', dec(1), dec('7.00'), null))).toEqual({ 1: '0.00', 2: '0.00', 3: '0.00' });
  expect(text(levelAmounts(p, 'EURUSD', dec(1), dec('7.00'), dec('10.00')))).toEqual({ 1: '5.00', 2: '3.00', 3: '2.00' });
});
