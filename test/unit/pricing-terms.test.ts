import { pricingTermsStatement } from '../../src/domain/prices/pricing-terms';

describe('the pricing terms reader', () => {
  const read = pricingTermsStatement({ currency: 'EUR', groupId: null }, ['EURUSD', 'EURUSD', 'USDJPY']);

  test('when the statement is built, then every group_instruments column of the entity is read, prefixed gi_', () => {
    for (const column of [
      'group_id',
      'instrument_id',
      'enabled',
      'spread',
      'commission_value',
      'swap_long',
      'swap_short',
      'created_at',
      'updated_at',
    ])
      expect(read.sql).toContain(`gi.${column} as gi_${column}`);
    expect(read.sql.match(/gi\.\w+ as gi_/g)).toHaveLength(9);
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
