import { adminToken, createCustomer } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, setUpMarket } from '../../helpers/trading';
import { findLedgerMismatches } from '../../../src/domain/ledger/ledger';
import { expectOk } from '../trading/trading-kit';
import { walletOf } from '../money/money-kit';

jest.setTimeout(120_000);

/**
 * Money conservation with bonuses: every money path run on accounts holding an active bonus,
 * then, for every account, balance = the sum of its `balance` rows and credit = the sum of its
 * `credit` rows.
 */
let app: TestApp;
let admin: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'bonus_money', env: { ROLE: 'api' } });
  admin = await adminToken(app);
});
afterAll(() => app?.stop());

async function bucketsAgree(): Promise<void> {
  const rows = await sql<{ login: string; balance: string; credit: string; balance_rows: string; credit_rows: string }>(
    app,
    `select a.login::text as login, a.balance::text as balance, a.credit::text as credit,
            coalesce(sum(l.amount) filter (where l.bucket = 'balance'), 0)::numeric(38,2)::text as balance_rows,
            coalesce(sum(l.amount) filter (where l.bucket = 'credit'), 0)::numeric(38,2)::text as credit_rows
       from accounts a left join ledger_entries l on l.account_id = a.id group by a.id`,
  );
  expect(rows.length).toBeGreaterThan(0);
  for (const r of rows) {
    expect({ login: r.login, balance: r.balance_rows, credit: r.credit_rows }).toEqual({
      login: r.login,
      balance: r.balance,
      credit: r.credit,
    });
  }
  await expectLedgerBalanced(app);
}

test('when every money path runs on accounts with an active bonus, then balance and credit each equal the sum of their rows', async () => {
  const { groupId } = await setUpMarket(app, admin);
  const program = (terms: Record<string, unknown>) =>
    app.request('POST', '/api/crm/bonus-programs', {
      token: admin,
      body: {
        name: 'Conservation',
        currency: 'USD',
        kind: 'fixed',
        amount: 100,
        group_ids: [groupId],
        trigger: 'manual',
        release: { mode: 'per_lot', lots_per_unit: 0.1 },
        ...terms,
      },
    });
  const perLot = expectOk(await program({}), 201).id;
  const proportional = expectOk(
    await program({ on_transfer_out: 'proportional', release: { mode: 'on_target', lots_per_unit: 0.1 } }),
    201,
  ).id;
  expectOk(await program({ kind: 'deposit_percent', amount: undefined, percent: 10, trigger: 'deposit' }), 201);

  const customer = await createCustomer(app, admin);
  const wallet = await walletOf(app, customer);
  const live = await fundedAccount(app, admin, customer.id, groupId, 5000); // deposit: a deposit bonus of 500
  const grant = (program_id: string, amount?: number) =>
    app.request('POST', `/api/crm/customers/${customer.id}/bonuses`, { token: admin, body: { program_id, login: live, amount } });
  expectOk(await grant(perLot), 201);
  const b = expectOk(await grant(proportional), 201);
  expectOk(
    await app.request('POST', `/api/backoffice/accounts/${wallet}/deposits`, { token: admin, body: { amount: 1000 } }),
    201,
  );
  await bucketsAgree();

  // Manual credit in and out.
  expectOk(
    await app.request('POST', `/api/backoffice/accounts/${live}/credit`, {
      token: admin,
      body: { direction: 'in', amount: 25, comment: 'x' },
    }),
    201,
  );
  expectOk(
    await app.request('POST', `/api/backoffice/accounts/${live}/credit`, {
      token: admin,
      body: { direction: 'out', amount: 5, comment: 'y' },
    }),
    201,
  );
  // Transfer in (no bonus question on the way in), then out with the forfeiture accepted.
  expectOk(
    await app.request('POST', '/customers/me/transfer', {
      token: customer.token,
      body: { from_login: wallet, to_login: live, amount: 300 },
    }),
    200,
  );
  expect(
    (
      await app.request('POST', '/customers/me/transfer', {
        token: customer.token,
        body: { from_login: live, to_login: wallet, amount: 200 },
      })
    ).status,
  ).toBe(409);
  expectOk(
    await app.request('POST', '/customers/me/transfer', {
      token: customer.token,
      body: { from_login: live, to_login: wallet, amount: 200, accept_bonus_forfeit: true },
    }),
    200,
  );
  await bucketsAgree();

  // A fresh per-lot bonus (the first was forfeited by the transfer), then orders: opens and closes
  // with per-lot releases (one held too briefly to count).
  expectOk(await grant(perLot), 201);
  for (const held of [120, 5, 300]) {
    const ticket = expectOk(
      await app.request('POST', '/orders', { token: admin, body: { login: live, symbol: 'EURUSD', cmd: 0, volume: 1 } }),
      201,
    ).order;
    await sql(app, `update orders set created_at = now() - make_interval(secs => ?) where ticket = ?`, [held, ticket]);
    expectOk(await app.request('POST', `/orders/${ticket}/close`, { token: admin }), 200);
  }
  // A withdrawal from the wallet, approved.
  const w = expectOk(
    await app.request('POST', '/customers/me/withdraw', {
      token: customer.token,
      body: { amount: 50, payment_data: { iban: 'DE89370400440532013000' } },
    }),
    202,
  );
  expectOk(await app.request('POST', `/api/backoffice/withdrawals/${w.transaction_id}/approve`, { token: admin }), 200);
  // Cancel the proportional bonus, still active after its partial forfeit.
  expectOk(await app.request('POST', `/api/crm/bonuses/${b.id}/cancel`, { token: admin, body: { reason: 'test' } }), 200);
  await bucketsAgree();

  const mismatchFree = await findLedgerMismatches(app.runtime.services.orm.em.fork());
  expect(mismatchFree).toEqual([]);
});

test('when credit changes without its ledger row, then the check names the account and the credit bucket', async () => {
  const customer = await createCustomer(app, admin);
  const wallet = await walletOf(app, customer);
  await sql(app, 'update accounts set credit = credit + 1 where login = ?', [wallet]);
  try {
    const found = await findLedgerMismatches(app.runtime.services.orm.em.fork());
    expect(found).toEqual([{ login: String(wallet), bucket: 'credit', balance: '1.00', ledger_sum: '0' }]);
  } finally {
    await sql(app, 'update accounts set credit = credit - 1 where login = ?', [wallet]);
  }
});
