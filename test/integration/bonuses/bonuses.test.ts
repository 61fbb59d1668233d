import { adminToken, createCustomer, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, setUpMarket } from '../../helpers/trading';
import { eventsOf, expect422, expectError, expectOk } from '../trading/trading-kit';
import { transfer, walletOf } from '../money/money-kit';
import { rolloverPassedToday, runEod } from '../eod/eod-kit';
import { createProvider } from '../payments/payments-kit';
import type { EntityManager } from '@mikro-orm/postgresql';
import { closeOrder, loadPricingTerms, type PricingSource } from '../../../src/domain/orders/close-order';

jest.setTimeout(120_000);

/**
 * Bonus programmes and bonuses: grants by hand and by deposit, turnover counted at close under
 * the anti-churn rules, release on target and per lot, the forfeiture quote on money out,
 * cancellation and expiry; after every test each account's balance and credit equal the sums
 * of their ledger rows.
 */
let app: TestApp;
let admin: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'bonuses' });
  admin = await adminToken(app);
});
afterAll(() => app?.stop());
afterEach(() => expectLedgerBalanced(app));

async function program(groupId: string, terms: Record<string, unknown> = {}): Promise<string> {
  const res = await app.request('POST', '/api/crm/bonus-programs', {
    token: admin,
    body: {
      name: 'Welcome 100',
      currency: 'USD',
      kind: 'fixed',
      amount: 100,
      group_ids: [groupId],
      trigger: 'manual',
      first_deposit_only: false,
      release: { mode: 'on_target', lots_per_unit: 0.1 },
      on_transfer_out: 'forfeit',
      enabled: true,
      ...terms,
    },
  });
  return expectOk(res, 201, 'programme').id as string;
}

async function setUp(deposit = 10_000, terms: Record<string, unknown> = {}) {
  const { groupId } = await setUpMarket(app, admin);
  const programId = await program(groupId, terms);
  const customer = await createCustomer(app, admin);
  const live = await fundedAccount(app, admin, customer.id, groupId, deposit);
  return { groupId, programId, customer, live };
}

function grant(customer: LoggedIn, body: Record<string, unknown>, key?: string) {
  return app.request('POST', `/api/crm/customers/${customer.id}/bonuses`, {
    token: admin,
    body,
    headers: key ? { 'idempotency-key': key } : {},
  });
}

/** Opens a market order, dates its open `heldSeconds` back, and closes it. */
async function roundTurn(login: number, volume: number, heldSeconds: number, cmd: 0 | 1 = 0): Promise<number> {
  const ticket = expectOk(
    await app.request('POST', '/orders', { token: admin, body: { login, symbol: 'EURUSD', cmd, volume } }),
    201,
    'open',
  ).order as number;
  await sql(app, `update orders set created_at = now() - make_interval(secs => ?) where ticket = ?`, [heldSeconds, ticket]);
  expectOk(await app.request('POST', `/orders/${ticket}/close`, { token: admin }), 200, 'close');
  return ticket;
}

async function account(login: number) {
  return expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token: admin }), 200, 'account');
}

async function bonusOf(customer: LoggedIn, id: string) {
  const mine = expectOk(await app.request('GET', '/customers/me/bonuses', { token: customer.token }), 200, 'bonuses');
  return mine.items.find((b: { id: string }) => b.id === id);
}

async function rowsOf(login: number, kind: string) {
  return sql<{ kind: string; bucket: string; amount: string }>(
    app,
    `select l.kind, l.bucket, l.amount::text as amount from ledger_entries l join accounts a on a.id = l.account_id
      where a.login = ? and l.kind = ? order by l.seq`,
    [login, kind],
  );
}

test('when a 100 bonus needing 10 lots sees 9.9 lots of 2-minute trades and 2 lots of 10-second trades, then it stays active; one more lot completes it', async () => {
  const { programId, customer, live } = await setUp();
  const wallet = await walletOf(app, customer);
  const granted = expectOk(await grant(customer, { program_id: programId, login: live }, 'grant-example'), 201, 'grant');
  expect(granted).toMatchObject({
    amount: '100.00',
    released: '0.00',
    lots_required: '10.00',
    lots_done: '0.00',
    status: 'active',
    source: { type: 'manual' },
  });
  const replay = await grant(customer, { program_id: programId, login: live }, 'grant-example');
  expect(replay.body.id).toBe(granted.id);
  expect(await account(live)).toMatchObject({ balance: '10000.00', credit: '100.00' });

  // Before the target, money out quotes the forfeiture.
  const refused = await transfer(app, customer, live, wallet, 10);
  expectError(refused, 409, 'BONUS_FORFEIT_UNCONFIRMED');
  expect(refused.body.forfeit).toEqual({ bonus_id: granted.id, amount: '100.00' });

  for (let i = 0; i < 3; i++) await roundTurn(live, 3.3, 120);
  await roundTurn(live, 2, 10);
  const before = await bonusOf(customer, granted.id);
  expect(before).toMatchObject({ status: 'active', lots_done: '9.90', released: '0.00' });
  expect((await account(live)).credit).toBe('100.00');

  const completing = await roundTurn(live, 1, 120);
  expect(await bonusOf(customer, granted.id)).toMatchObject({ status: 'completed', lots_done: '10.90', released: '100.00' });
  // The completing close's events, in publication order: the close's own, then the bonus's, then the credit's change.
  const sequence = await sql<{ type: string }>(
    app,
    `select type from domain_events
      where customer_id = ? and seq >= (select seq from domain_events where type = 'order.closed' and aggregate_id = ?)
        and type in ('order.closed', 'bonus.progress', 'bonus.released', 'bonus.completed', 'account.credit_changed')
      order by seq`,
    [customer.id, String(completing)],
  );
  expect(sequence.map((e) => e.type)).toEqual([
    'order.closed',
    'bonus.progress',
    'bonus.released',
    'bonus.completed',
    'account.credit_changed',
  ]);
  expect(await rowsOf(live, 'bonus_release')).toEqual([
    { kind: 'bonus_release', bucket: 'credit', amount: '-100.00' },
    { kind: 'bonus_release', bucket: 'balance', amount: '100.00' },
  ]);
  expect((await account(live)).credit).toBe('0.00');
  expect(await eventsOf(app, 'bonus.completed', granted.id)).toHaveLength(1);
  expect((await eventsOf(app, 'bonus.progress', granted.id)).map((e) => e.data.lots_done)).toEqual([
    '3.30',
    '6.60',
    '9.90',
    '10.90',
  ]);
  // Once released, the money is the customer's: a transfer out needs no confirmation.
  expectOk(await transfer(app, customer, live, wallet, 10), 200);
  // The customer is told of the grant and the release.
  const told = await waitFor(
    'bonus notifications',
    async () => {
      const res = await app.request('GET', '/customers/me/notifications?page_size=50', { token: customer.token });
      const types = (res.body.items ?? []).map((n: { type: string }) => n.type);
      return types.includes('bonus.granted') && types.includes('bonus.completed') ? res.body.items : undefined;
    },
    30_000,
  );
  expect(told.find((n: { type: string }) => n.type === 'bonus.granted')).toMatchObject({ title: 'Bonus granted' });
});

test('when hedged positions close, then only the net volume counts, and each order counts once', async () => {
  const { programId, customer, live } = await setUp();
  const granted = expectOk(await grant(customer, { program_id: programId, login: live }), 201);
  const buy = expectOk(
    await app.request('POST', '/orders', { token: admin, body: { login: live, symbol: 'EURUSD', cmd: 0, volume: 2 } }),
    201,
  ).order;
  const sell = expectOk(
    await app.request('POST', '/orders', { token: admin, body: { login: live, symbol: 'EURUSD', cmd: 1, volume: 1.5 } }),
    201,
  ).order;
  await sql(app, `update orders set created_at = now() - interval '5 minutes' where ticket in (?, ?)`, [buy, sell]);
  expectOk(await app.request('POST', `/orders/${sell}/close`, { token: admin }), 200);
  expectOk(await app.request('POST', `/orders/${buy}/close`, { token: admin }), 200);
  // The sell was fully matched by the buy (0); the buy's 2 lots less the 1.5 it overlapped count 0.5.
  expect(await bonusOf(customer, granted.id)).toMatchObject({ lots_done: '0.50', status: 'active' });
  const [counted] = await sql<{ n: number }>(app, 'select count(*)::int as n from bonus_turnover where bonus_id = ?', [
    granted.id,
  ]);
  expect(counted!.n).toBe(2);
});

test('when a close read the account before its credit was granted, then the close still counts toward the bonus', async () => {
  const { programId, customer, live } = await setUp(10_000, { release: { mode: 'per_lot', lots_per_unit: 0.1 } });
  const ticket = expectOk(
    await app.request('POST', '/orders', { token: admin, body: { login: live, symbol: 'EURUSD', cmd: 0, volume: 2 } }),
    201,
  ).order as number;
  await sql(app, `update orders set created_at = now() - interval '5 minutes' where ticket = ?`, [ticket]);
  const granted = expectOk(await grant(customer, { program_id: programId, login: live }), 201);
  // The close sees the account as it was before the grant: no credit, so its statement leaves the count out.
  const beforeGrant: PricingSource = async (em, accountId, symbol) => {
    const { account, terms } = await loadPricingTerms(em, accountId, symbol);
    return { account: { ...account, credit: '0.00' }, terms };
  };
  const em = app.runtime.services.orm.em.fork() as EntityManager;
  const outcome = await closeOrder(em, app.runtime.services.quotes, String(ticket), 'manual', null, beforeGrant);
  expect(outcome).toMatchObject({ kind: 'closed', booked: true });
  expect(await bonusOf(customer, granted.id)).toMatchObject({ lots_done: '2.00', released: '20.00', status: 'active' });
  expect(await rowsOf(live, 'bonus_release')).toEqual([
    { kind: 'bonus_release', bucket: 'credit', amount: '-20.00' },
    { kind: 'bonus_release', bucket: 'balance', amount: '20.00' },
  ]);
  expect((await eventsOf(app, 'bonus.progress', granted.id)).map((e) => e.data.lots_done)).toEqual(['2.00']);
});

test('when the release is per lot, then each counted lot releases its share as a bonus_release pair', async () => {
  const { programId, customer, live } = await setUp(10_000, { release: { mode: 'per_lot', lots_per_unit: 0.1 } });
  const granted = expectOk(await grant(customer, { program_id: programId, login: live }), 201);
  await roundTurn(live, 2.5, 120);
  expect(await bonusOf(customer, granted.id)).toMatchObject({ lots_done: '2.50', released: '25.00', status: 'active' });
  expect(await account(live)).toMatchObject({ credit: '75.00' });
  expect(await rowsOf(live, 'bonus_release')).toEqual([
    { kind: 'bonus_release', bucket: 'credit', amount: '-25.00' },
    { kind: 'bonus_release', bucket: 'balance', amount: '25.00' },
  ]);
});

test('when the customer accepts the forfeiture, then the transfer proceeds and the credit leaves in the same transaction', async () => {
  const { programId, customer, live } = await setUp();
  const wallet = await walletOf(app, customer);
  const granted = expectOk(await grant(customer, { program_id: programId, login: live }), 201);
  const done = await app.request('POST', '/customers/me/transfer', {
    token: customer.token,
    body: { from_login: live, to_login: wallet, amount: 10, accept_bonus_forfeit: true },
  });
  expectOk(done, 200, 'transfer');
  expect(await account(live)).toMatchObject({ balance: '9990.00', credit: '0.00' });
  expect(await bonusOf(customer, granted.id)).toMatchObject({ status: 'forfeited' });
  expect(await eventsOf(app, 'bonus.forfeited', granted.id)).toHaveLength(1);
});

test('when the programme is proportional, then money out forfeits the same fraction of the credit', async () => {
  const { programId, customer, live } = await setUp(1000, { on_transfer_out: 'proportional' });
  const wallet = await walletOf(app, customer);
  const granted = expectOk(await grant(customer, { program_id: programId, login: live }), 201);
  const refused = await transfer(app, customer, live, wallet, 250);
  expectError(refused, 409, 'BONUS_FORFEIT_UNCONFIRMED');
  expect(refused.body.forfeit).toEqual({ bonus_id: granted.id, amount: '25.00' });
  expectOk(
    await app.request('POST', '/customers/me/transfer', {
      token: customer.token,
      body: { from_login: live, to_login: wallet, amount: 250, accept_bonus_forfeit: true },
    }),
    200,
  );
  expect(await account(live)).toMatchObject({ balance: '750.00', credit: '75.00' });
  expect(await bonusOf(customer, granted.id)).toMatchObject({ status: 'active', amount: '75.00' });
});

test('when staff cancel a bonus, then its credit leaves; a bonus past its expiry ends at the end of day', async () => {
  const { programId, customer, live } = await setUp();
  const a = expectOk(await grant(customer, { program_id: programId, login: live, amount: 40 }), 201);
  const b = expectOk(await grant(customer, { program_id: programId, login: live, amount: 60 }), 201);
  const cancelled = await app.request('POST', `/api/crm/bonuses/${a.id}/cancel`, { token: admin, body: { reason: 'abuse' } });
  expect(expectOk(cancelled, 200)).toMatchObject({ status: 'cancelled', end_reason: 'abuse' });
  expectError(
    await app.request('POST', `/api/crm/bonuses/${a.id}/cancel`, { token: admin, body: { reason: 'again' } }),
    409,
    'BONUS_NOT_ACTIVE',
  );
  expect((await account(live)).credit).toBe('60.00');

  await sql(app, `update bonuses set expires_at = now() - interval '1 day' where id = ?`, [b.id]);
  const today = await rolloverPassedToday(app, admin);
  const run = await runEod(app, admin, today);
  expect(run.status).toBe('completed');
  expect(await bonusOf(customer, b.id)).toMatchObject({ status: 'expired' });
  expect((await account(live)).credit).toBe('0.00');
  expect(await eventsOf(app, 'bonus.expired', b.id)).toHaveLength(1);
});

test('when a qualifying deposit lands on an eligible account, then the deposit programme grants its percentage', async () => {
  const { groupId } = await setUpMarket(app, admin);
  await program(groupId, {
    kind: 'deposit_percent',
    amount: undefined,
    percent: 50,
    max_amount: 200,
    trigger: 'deposit',
    min_deposit: 100,
  });
  const customer = await createCustomer(app, admin);
  const live = await fundedAccount(app, admin, customer.id, groupId, 0);
  expectOk(await app.request('POST', `/api/backoffice/accounts/${live}/deposits`, { token: admin, body: { amount: 50 } }), 201);
  expect((await account(live)).credit).toBe('0.00');
  expectOk(await app.request('POST', `/api/backoffice/accounts/${live}/deposits`, { token: admin, body: { amount: 1000 } }), 201);
  expect((await account(live)).credit).toBe('200.00');
  const mine = expectOk(await app.request('GET', '/customers/me/bonuses', { token: customer.token }), 200);
  expect(mine.items).toHaveLength(1);
  expect(mine.items[0]).toMatchObject({ amount: '200.00', source: { type: 'deposit' }, status: 'active' });
});

test('when a grant names an ineligible account or a login not the customer’s, then 422 or 404 and nothing is granted', async () => {
  const { programId, customer } = await setUp();
  const other = await createCustomer(app, admin);
  const otherGroup = (await setUpMarket(app, admin)).groupId;
  const outside = await fundedAccount(app, admin, customer.id, otherGroup, 0);
  const foreign = await fundedAccount(app, admin, other.id, otherGroup, 0);
  expect422(await grant(customer, { program_id: programId, login: outside }), ['body', 'login']);
  expectError(await grant(customer, { program_id: programId, login: foreign }), 404, 'NOT_FOUND');
  expect(expectOk(await app.request('GET', `/api/crm/customers/${customer.id}/bonuses`, { token: admin }), 200).items).toEqual(
    [],
  );
});

test('when a provider deposit that granted a bonus is charged back, then the bonus is forfeited with its credit', async () => {
  const { groupId } = await setUpMarket(app, admin);
  await program(groupId, { kind: 'fixed', amount: 30, trigger: 'deposit' });
  const customer = await createCustomer(app, admin);
  const live = await fundedAccount(app, admin, customer.id, groupId, 0);
  const sim = await createProvider(app, admin, { adapter: 'simulator' });
  const intent = expectOk(
    await app.request('POST', '/customers/me/deposits', {
      token: customer.token,
      body: { provider_id: sim.id, amount: 200, currency: 'USD', login: live },
      headers: { 'idempotency-key': `dep-${live}` },
    }),
    201,
    'intent',
  );
  expectOk(await app.request('POST', `/simulator/payments/${intent.id}`, { token: admin, body: { outcome: 'completed' } }), 200);
  expect(await account(live)).toMatchObject({ balance: '200.00', credit: '30.00' });
  const [bonus] = expectOk(await app.request('GET', '/customers/me/bonuses', { token: customer.token }), 200).items;
  expect(bonus).toMatchObject({ status: 'active', source: { type: 'deposit', id: intent.id } });

  expectOk(
    await app.request('POST', `/simulator/payments/${intent.id}`, { token: admin, body: { outcome: 'charged_back' } }),
    200,
  );
  expect(await account(live)).toMatchObject({ balance: '0.00', credit: '0.00' });
  expect(await bonusOf(customer, bonus.id)).toMatchObject({ status: 'forfeited', end_reason: 'deposit_reversed' });
});
