import { ROUTES } from '../../src/api/routes';

/**
 * Every request that moves money (deposit, transfer, withdrawal and its
 * decision, payout) takes an Idempotency-Key, through the one mechanism of the route table.
 * A money route added without it fails here, payouts included when they arrive.
 */
const MONEY_TAGS = new Set(['money', 'withdrawals', 'payouts']);
const movesMoney = ROUTES.filter(
  (r) => r.method === 'post' && (r.tags.some((t) => MONEY_TAGS.has(t)) || /\/(payouts|deposits|transfer|withdraw)/.test(r.path)),
);

test('when the route table is read, then the money-moving routes are the ones this issue knows, at least', () => {
  const names = movesMoney.map((r) => r.operationId);
  expect(names).toEqual(
    expect.arrayContaining([
      'createDeposit',
      'transferBetweenMyAccounts',
      'requestWithdrawal',
      'approveWithdrawal',
      'rejectWithdrawal',
      'requestPayout',
      'approvePayout',
      'rejectPayout',
    ]),
  );
});

test.each(movesMoney.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))(
  'when %s moves money, then it accepts an Idempotency-Key',
  (_name, route) => {
    expect(route.idempotent).toBe(true);
  },
);
