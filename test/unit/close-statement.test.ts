import { closeStatement, type CloseParams } from '../../src/domain/orders/close-statements';

const params: CloseParams = {
  ticket: '42',
  closed_at: new Date(0),
  close_price: '1.1',
  profit: '-3.50',
  commission: '-0.70',
  reason: 'manual',
  event: '{"order":42}',
  bulk_close_run_id: null,
};

describe('the closing statement', () => {
  test('when a single order closes, then every placeholder has its named value and no run item is touched', () => {
    const { sql, values } = closeStatement(params);
    expect(sql.match(/\?/g)).toHaveLength(values.length);
    expect(sql).not.toContain('bulk_close_items');
    // profit goes to the order, the balance and the ledger row; the ticket to the order, the two ledger rows (profit
    // and commission, with its comment), the read of what the order was charged, and the event.
    expect(values.filter((v) => v === '-3.50')).toHaveLength(3);
    expect(values.filter((v) => v === '42')).toHaveLength(6);
    // The commission goes to the balance, its ledger row (amount, and the profit row's balance_after), its
    // condition, and the order's charged total.
    expect(values.filter((v) => v === '-0.70')).toHaveLength(5);
    expect(values).toContain('Close of order 42');
  });

  test('when a bulk close run closes it, then the same statement also decides the run item', () => {
    const { sql, values } = closeStatement({ ...params, bulk_close_run_id: 'run' });
    expect(sql.match(/\?/g)).toHaveLength(values.length);
    expect(sql).toContain('update bulk_close_items');
    expect(values.filter((v) => v === 'run')).toHaveLength(2);
  });
});
