import { pricingTermsStatement, termsOfRows } from '../../src/domain/prices/pricing-terms';

describe('the pricing terms reader', () => {
  const read = pricingTermsStatement({ currency: 'EUR', groupId: null }, ['EURUSD', 'EURUSD', 'USDJPY']);

  test("when the statement is built, then the group row's columns pricing reads are read, prefixed gi_", () => {
    for (const column of ['group_id', 'enabled', 'spread', 'commission_value'])
      expect(read.sql).toContain(`gi.${column} as gi_${column}`);
  });

  test('when rows come back, then they are plain terms: wanted and joining instruments, group rows by symbol, the commission', () => {
    const row = {
      id: 'i1',
      symbol: 'EURUSD',
      digits: 5,
      contract_size: '100000.0000',
      base_currency: 'EUR',
      quote_currency: 'USD',
      wanted: true,
      joining: true,
      gi_group_id: 'g1',
      gi_enabled: false,
      gi_spread: '0.00010',
      gi_commission_value: null,
      grp_commission_type: 'per_lot' as const,
      grp_commission_value: '7.0000',
    };
    const terms = termsOfRows([row, { ...row, id: 'i2', symbol: 'GBPUSD', wanted: false, gi_group_id: null }]);
    const eurusd = { symbol: 'EURUSD', digits: 5, contractSize: '100000.0000', baseCurrency: 'EUR', quoteCurrency: 'USD' };
    expect(terms.instruments).toEqual([eurusd]);
    expect(terms.joining.map((i) => i.symbol)).toEqual(['EURUSD', 'GBPUSD']);
    expect(terms.rows).toEqual([{ symbol: 'EURUSD', enabled: false, spread: '0.00010', commissionValue: null }]);
    expect(terms.commission).toEqual({ type: 'per_lot', value: '7.0000' });
  });

  test('when symbols repeat, then they are bound once, as one JSON array, with the currency and group', () => {
    // The group twice: its instrument rows, and its own commission terms.
    expect(read.values).toEqual(['["EURUSD","USDJPY"]', null, 'EUR', null, null]);
  });

  test("when the statement is built, then every row carries the group's commission terms, prefixed grp_", () => {
    expect(read.sql).toContain('g.commission_type as grp_commission_type');
    expect(read.sql).toContain('g.commission_value::text as grp_commission_value');
  });
});
