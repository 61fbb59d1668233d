import { arrayLiteral, classCountsQuery, classedStatement, statsQuery } from '../../src/domain/risk/classify';
import { RiskRuleInputSchema } from '../../src/domain/risk/rule-input';

/** The classification SQL is built from fragments with positional parameters: their count must always match. */
const window = { start: new Date('2026-01-01T00:00:00Z'), end: new Date('2026-01-31T00:00:00Z') };
const base = {
  min_trades_to_classify: 5,
  rolling_window_days: 30,
  toxic: { max_avg_hold_seconds: 60, min_win_rate: 0.9, min_profit_factor: 2, min_trades_per_day: 1 },
  watchlist: { min_win_rate: 0.6 },
};
const conditions = [
  {},
  { symbols: ['EURUSD'] },
  { group_ids: ['00000000-0000-4000-8000-000000000001'], kinds: ['live', 'prop'] },
  { group_ids: ['00000000-0000-4000-8000-000000000001'], kinds: ['demo'], symbols: ['EURUSD', 'XAUUSD'] },
];

const placeholders = (sql: string) => (sql.match(/\?/g) ?? []).length;

test.each(conditions.map((c) => [JSON.stringify(c), c] as const))(
  'when the conditions are %s, then every statement binds exactly one value per placeholder',
  (_name, c) => {
    const input = RiskRuleInputSchema.parse({ ...base, conditions: c });
    for (const stmt of [
      classCountsQuery(input, window),
      statsQuery(input, window),
      classedStatement(input, window, (p) => `select ${p.add('x')}::text, * from classed`),
    ])
      expect(placeholders(stmt.sql)).toBe(stmt.values.length);
  },
);

test('when list values hold quotes, backslashes, commas or braces, then the array literal quotes each element whole', () => {
  expect(arrayLiteral(['a', 'b"c', 'd\\e', '{x,y}'])).toBe('{"a","b\\"c","d\\\\e","{x,y}"}');
  expect(arrayLiteral([])).toBe('{}');
});
