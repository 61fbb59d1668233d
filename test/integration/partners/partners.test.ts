import { adminToken, createCustomer, createStaff, loginStaff } from '../../helpers/identity';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, setUpMarket } from '../../helpers/trading';
import { rolloverPassedToday, runEod } from '../eod/eod-kit';
import { group } from '../trading/engine-kit';
import { eventsOf, expect422, expectError, expectOk } from '../trading/trading-kit';
import { createProvider } from '../payments/payments-kit';
import { accrualsOf, accrueAgain, attribute, openCase, partner, plan, rewardRows, roundTurn } from './partners-kit';

jest.setTimeout(120_000);

/**
 * Introducing brokers: the tree and its cycles, attribution, accruals at the close along the
 * chain with their exclusions, the daily payment, held rewards, clawback and the portal.
 * After every test each account's balance equals the sum of its ledger rows.
 */
let app: TestApp;
let admin: string;
/** A group charging 1.75 per lot per side: 2 lots pay 7.00 over the open and the close. */
let groupId: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'partners' });
  admin = await adminToken(app);
  await setUpMarket(app, admin);
  groupId = await group(app, admin, { commission_type: 'per_lot', commission_value: 1.75 });
});
afterAll(() => app?.stop());
afterEach(() => expectLedgerBalanced(app));

/** A ← B ← C under one 50/30/20 plan, and a funded client of C. */
async function chain(terms: Record<string, unknown> = {}) {
  const planId = await plan(app, admin, terms);
  const a = await partner(app, admin, planId);
  const b = await partner(app, admin, planId, a);
  const c = await partner(app, admin, planId, b);
  const client = await createCustomer(app, admin);
  expectOk(await attribute(app, admin, client.id, c.id), 200, 'attribute');
  const login = await fundedAccount(app, admin, client.id, groupId);
  return { planId, a, b, c, client, login };
}

describe('accrual along the chain', () => {
  test('when a client of C closes 2 lots that paid 7.00 commission, then C, B and A accrue exactly 3.50, 2.10 and 1.40, once', async () => {
    const { a, b, c, client, login } = await chain();
    const customer = expectOk(await app.request('GET', `/api/crm/customers/${client.id}`, { token: admin }), 200);
    expect(customer).toMatchObject({ partner_id: c.id, affiliate_id: c.code });

    const ticket = await roundTurn(app, admin, login, 2);
    const rows = await accrualsOf(app, ticket);
    expect(rows).toEqual([
      { partner_id: c.id, level: 1, amount: '3.50', status: 'accrued', reason: null },
      { partner_id: b.id, level: 2, amount: '2.10', status: 'accrued', reason: null },
      { partner_id: a.id, level: 3, amount: '1.40', status: 'accrued', reason: null },
    ]);
    const accrued = (await eventsOf(app, 'ib.reward_accrued')).filter((e) => e.data.ticket === String(ticket));
    expect(accrued.map((e) => [e.customer_id, e.data.amount])).toEqual([
      [c.customer.id, '3.50'],
      [b.customer.id, '2.10'],
      [a.customer.id, '1.40'],
    ]);

    // A retried close is refused, and the accrual of the same order run again adds nothing.
    expectError(await app.request('POST', `/orders/${ticket}/close`, { token: admin }), 409, 'ORDER_NOT_OPEN');
    await accrueAgain(app, ticket);
    expect(await accrualsOf(app, ticket)).toEqual(rows);
    expect((await eventsOf(app, 'ib.reward_accrued')).filter((e) => e.data.ticket === String(ticket))).toHaveLength(3);
  });

  test("when A trades from its own account, then A accrues 0 with reason self_trading; B's own trade still pays A its level", async () => {
    const { a, b } = await chain();
    const own = await fundedAccount(app, admin, a.customer.id, groupId);
    const ticket = await roundTurn(app, admin, own, 2);
    expect(await accrualsOf(app, ticket)).toEqual([
      { partner_id: a.id, level: 1, amount: '0.00', status: 'excluded', reason: 'self_trading' },
    ]);

    const bOwn = await fundedAccount(app, admin, b.customer.id, groupId);
    const bTicket = await roundTurn(app, admin, bOwn, 2);
    expect(await accrualsOf(app, bTicket)).toEqual([
      { partner_id: b.id, level: 1, amount: '0.00', status: 'excluded', reason: 'self_trading' },
      { partner_id: a.id, level: 2, amount: '2.10', status: 'accrued', reason: null },
    ]);
  });

  test('when an order is held less than min_hold_seconds, then every level accrues 0 with reason short_hold', async () => {
    const { login } = await chain();
    const ticket = await roundTurn(app, admin, login, 2, 10);
    const rows = await accrualsOf(app, ticket);
    expect(rows).toHaveLength(3);
    expect(rows.every((r) => r.amount === '0.00' && r.reason === 'short_hold' && r.status === 'excluded')).toBe(true);
  });

  test('when a client with no partner closes, then nothing accrues', async () => {
    const customer = await createCustomer(app, admin);
    const login = await fundedAccount(app, admin, customer.id, groupId);
    const ticket = await roundTurn(app, admin, login, 1);
    expect(await accrualsOf(app, ticket)).toEqual([]);
  });
});

describe('payment', () => {
  test('when the end of day runs twice for a date, then each partner of a daily plan is paid once, one ib_reward row each', async () => {
    const { a, b, c, login } = await chain();
    const today = await rolloverPassedToday(app, admin);
    // Closed after the date's rollover and before its run: the run pays it with the date.
    const ticket = await roundTurn(app, admin, login, 2);
    await runEod(app, admin, today);
    await runEod(app, admin, today);
    // Closed after the date's payment: the date is paid already, so this waits for the next one.
    const later = await roundTurn(app, admin, login, 2);
    await runEod(app, admin, today);
    expect((await accrualsOf(app, later)).map((r) => r.status)).toEqual(['accrued', 'accrued', 'accrued']);
    expect(await rewardRows(app, c.customer.id)).toEqual([{ kind: 'ib_reward', amount: '3.50' }]);
    expect(await rewardRows(app, b.customer.id)).toEqual([{ kind: 'ib_reward', amount: '2.10' }]);
    expect(await rewardRows(app, a.customer.id)).toEqual([{ kind: 'ib_reward', amount: '1.40' }]);
    expect((await accrualsOf(app, ticket)).map((r) => r.status)).toEqual(['paid', 'paid', 'paid']);
    const paid = (await eventsOf(app, 'ib.reward_paid')).filter((e) => e.customer_id === c.customer.id);
    expect(paid).toHaveLength(1);
    expect(paid[0]!.data).toMatchObject({ amount: '3.50', trading_date: today, accruals: 1 });
  });

  test('when a plan pays instantly, then the close itself books the ib_reward rows', async () => {
    const { a, b, c, login } = await chain({ charge: 'instant' });
    const ticket = await roundTurn(app, admin, login, 2);
    expect((await accrualsOf(app, ticket)).map((r) => r.status)).toEqual(['paid', 'paid', 'paid']);
    // The partner is told, as of any money arriving.
    const told = await waitFor('the reward notification', async () => {
      const rows = await sql<{ title: string; body: string }>(
        app,
        `select title, body from notifications where customer_id = ? and type = 'ib.reward_paid'`,
        [c.customer.id],
      );
      return rows.length ? rows : undefined;
    });
    expect(told).toEqual([{ title: 'Partner reward paid', body: expect.stringContaining('3.50 USD') }]);
    expect(await rewardRows(app, c.customer.id)).toEqual([{ kind: 'ib_reward', amount: '3.50' }]);
    expect(await rewardRows(app, b.customer.id)).toEqual([{ kind: 'ib_reward', amount: '2.10' }]);
    expect(await rewardRows(app, a.customer.id)).toEqual([{ kind: 'ib_reward', amount: '1.40' }]);
  });
});

describe('fraud holds and clawback', () => {
  test('when the client is under a fraud case, then its accruals are on_hold, and released and paid when the case ends legitimate', async () => {
    const { c, client, login } = await chain({ charge: 'instant' });
    const caseId = await openCase(app, client.id);
    const ticket = await roundTurn(app, admin, login, 2);
    const held = await accrualsOf(app, ticket);
    expect(held.map((r) => [r.status, r.reason])).toEqual([
      ['on_hold', 'fraud_case'],
      ['on_hold', 'fraud_case'],
      ['on_hold', 'fraud_case'],
    ]);
    expect(await rewardRows(app, c.customer.id)).toEqual([]);
    expectOk(
      await app.request('POST', `/api/backoffice/fraud/cases/${caseId}/resolve`, {
        token: admin,
        body: { verdict: 'legitimate', actions: ['release_holds'], note: 'Checked: a real client' },
      }),
      200,
      'resolve',
    );
    expect((await accrualsOf(app, ticket)).map((r) => r.status)).toEqual(['paid', 'paid', 'paid']);
    expect(await rewardRows(app, c.customer.id)).toEqual([{ kind: 'ib_reward', amount: '3.50' }]);
  });

  test('when a case resolves as fraud with clawback_ib, then the paid rewards are reversed and the partner may go below zero', async () => {
    const { c, client, login } = await chain({ charge: 'instant' });
    await roundTurn(app, admin, login, 2);
    // C spends its reward first: the clawback still takes it back.
    await sql(app, `update accounts set balance = balance - 3.50 where customer_id = ? and kind = 'wallet'`, [c.customer.id]);
    await sql(
      app,
      `insert into ledger_entries (id, created_at, updated_at, account_id, kind, bucket, amount, balance_after, reference_type, reference_id)
       select gen_random_uuid(), now(), now(), id, 'withdrawal', 'balance', -3.50, balance, 'test', 'spent' from accounts
        where customer_id = ? and kind = 'wallet'`,
      [c.customer.id],
    );
    const caseId = await openCase(app, client.id);
    expectOk(
      await app.request('POST', `/api/backoffice/fraud/cases/${caseId}/resolve`, {
        token: admin,
        body: { verdict: 'fraud', actions: ['clawback_ib'], note: 'Churning for rewards' },
      }),
      200,
      'resolve',
    );
    expect(await rewardRows(app, c.customer.id)).toEqual([
      { kind: 'ib_reward', amount: '3.50' },
      { kind: 'ib_reward_reversal', amount: '-3.50' },
    ]);
    const [wallet] = await sql<{ balance: string }>(
      app,
      `select balance::text as balance from accounts where customer_id = ? and kind = 'wallet'`,
      [c.customer.id],
    );
    expect(wallet!.balance).toBe('-3.50');
    expect((await eventsOf(app, 'ib.reward_reversed')).some((e) => e.customer_id === c.customer.id)).toBe(true);
    expect(
      await sql(app, `select 1 from audit_entries where action = 'ib_rewards.reversed' and entity_id = ?`, [client.id]),
    ).toHaveLength(1);
  });

  test("when a client's deposit is charged back, then the rewards its orders earned since that deposit are reversed", async () => {
    const planId = await plan(app, admin, { charge: 'instant' });
    const p = await partner(app, admin, planId);
    const client = await createCustomer(app, admin);
    expectOk(await attribute(app, admin, client.id, p.id), 200);
    const live = await fundedAccount(app, admin, client.id, groupId, 0);
    const sim = await createProvider(app, admin, { adapter: 'simulator' });
    const intent = expectOk(
      await app.request('POST', '/customers/me/deposits', {
        token: client.token,
        body: { provider_id: sim.id, amount: 5000, currency: 'USD', login: live },
        headers: { 'idempotency-key': `dep-${live}` },
      }),
      201,
      'intent',
    );
    expectOk(
      await app.request('POST', `/simulator/payments/${intent.id}`, { token: admin, body: { outcome: 'completed' } }),
      200,
    );
    await roundTurn(app, admin, live, 2);
    expect(await rewardRows(app, p.customer.id)).toEqual([{ kind: 'ib_reward', amount: '3.50' }]);
    expectOk(
      await app.request('POST', `/simulator/payments/${intent.id}`, { token: admin, body: { outcome: 'charged_back' } }),
      200,
    );
    expect(await rewardRows(app, p.customer.id)).toEqual([
      { kind: 'ib_reward', amount: '3.50' },
      { kind: 'ib_reward_reversal', amount: '-3.50' },
    ]);
  });
});

describe('the tree and attribution', () => {
  test('when a partner is given itself or a partner below it as parent, then it is 409 PARTNER_CYCLE and nothing changes', async () => {
    const { a, b, c } = await chain();
    expectError(
      await app.request('PATCH', `/api/crm/partners/${a.id}`, { token: admin, body: { parent_partner_id: c.id } }),
      409,
      'PARTNER_CYCLE',
    );
    expectError(
      await app.request('PATCH', `/api/crm/partners/${a.id}`, { token: admin, body: { parent_partner_id: a.id } }),
      409,
      'PARTNER_CYCLE',
    );
    expect(expectOk(await app.request('GET', `/api/crm/partners/${a.id}`, { token: admin }), 200)).toMatchObject({
      parent_partner_id: null,
      level: 1,
    });
    expect(expectOk(await app.request('GET', `/api/crm/partners/${c.id}`, { token: admin }), 200).level).toBe(3);
    const below = expectOk(await app.request('GET', `/api/crm/partners?parent_partner_id=${b.id}`, { token: admin }), 200);
    expect(below.items).toEqual([expect.objectContaining({ id: c.id, parent_partner_id: b.id, level: 3 })]);

    // Staff who see only their own customers do not see these partners.
    const agent = await createStaff(app, ['manage_partners'], admin);
    await sql(app, `update staff_users set data_scope = 'own' where id = ?`, [agent.id]);
    const { access_token: token } = await loginStaff(app, agent.email, agent.password);
    expectError(await app.request('GET', `/api/crm/partners/${a.id}`, { token }), 404, 'NOT_FOUND');
    expectError(
      await app.request('PATCH', `/api/crm/partners/${c.id}`, { token, body: { parent_partner_id: null } }),
      404,
      'NOT_FOUND',
    );
  });

  test('when a commission share plan sums past 100, then it is 422 at levels', async () => {
    const res = await app.request('POST', '/api/crm/ib-plans', {
      token: admin,
      body: {
        name: 'Too generous',
        currency: 'USD',
        basis: 'commission_pct',
        levels: [
          { level: 1, value: 80 },
          { level: 2, value: 30 },
        ],
        charge: 'daily',
      },
    });
    expect422(res, ['body', 'levels']);
  });

  test('when a code is taken in another case, then it is 409; a lead with that code in lower case is attributed', async () => {
    const planId = await plan(app, admin);
    const owner = await createCustomer(app, admin);
    const code = `IB-${Date.now().toString(36).toUpperCase()}`;
    expectOk(
      await app.request('POST', '/api/crm/partners', { token: admin, body: { customer_id: owner.id, plan_id: planId, code } }),
      201,
    );
    const other = await createCustomer(app, admin);
    expectError(
      await app.request('POST', '/api/crm/partners', {
        token: admin,
        body: { customer_id: other.id, plan_id: planId, code: code.toLowerCase() },
      }),
      409,
      'PARTNER_CODE_TAKEN',
    );
    const lead = expectOk(
      await app.request('POST', '/api/crm/leads', {
        token: admin,
        body: { email: `lead-${Date.now()}@example.com`, first_name: 'Lea', last_name: 'Lead', partner_code: code.toLowerCase() },
      }),
      201,
      'lead',
    );
    expect(lead).toMatchObject({ affiliate_id: code });
    expect(lead.partner_id).toEqual(expect.any(String));
  });

  test('when a customer who made a first deposit is moved to another partner, then it needs manage_partners and a reason, audited', async () => {
    const { c, b, client } = await chain();
    await sql(app, `update customers set ftd_at = now() where id = ?`, [client.id]);
    const clerk = await createStaff(app, ['manage_customers', 'view_customers'], admin);
    expectError(await attribute(app, clerk.token, client.id, b.id, 'Moved desks'), 403, 'FORBIDDEN');
    expect422(await attribute(app, admin, client.id, b.id), ['body', 'reason']);
    expectOk(await attribute(app, admin, client.id, b.id, 'The client asked to move to B'), 200);
    const [row] = await sql<{ partner_id: string; affiliate_id: string }>(
      app,
      'select partner_id::text as partner_id, affiliate_id from customers where id = ?',
      [client.id],
    );
    expect(row).toEqual({ partner_id: b.id, affiliate_id: b.code });
    expect(c.id).not.toBe(b.id);
    expect(
      await sql(app, `select 1 from audit_entries where action = 'customer.partner_changed' and entity_id = ?`, [client.id]),
    ).toHaveLength(2);
  });
});

describe('the partner portal', () => {
  test('when a customer who is not a partner asks, then every portal route is 404', async () => {
    const customer = await createCustomer(app, admin);
    for (const path of ['', '/clients', '/rewards', '/sub-partners'])
      expectError(await app.request('GET', `/customers/me/partner${path}`, { token: customer.token }), 404, 'NOT_FOUND');
  });

  test('when a partner reads its portal, then it sees its level and totals, masked clients without balances, rewards and sub-partners', async () => {
    const { b, c, client, login } = await chain();
    await roundTurn(app, admin, login, 2);
    const me = expectOk(await app.request('GET', '/customers/me/partner', { token: c.customer.token }), 200);
    expect(me).toMatchObject({ id: c.id, code: c.code, level: 3, totals: { clients: 1, pending: '3.50', paid: '0.00' } });
    const clients = expectOk(await app.request('GET', '/customers/me/partner/clients', { token: c.customer.token }), 200).items;
    expect(clients).toHaveLength(1);
    const at = client.email.indexOf('@');
    expect(clients[0]).toEqual({
      email: `${client.email[0]}***${client.email.slice(at)}`,
      country: null,
      registered_at: expect.any(String),
      // The funding deposit was the client's first.
      ftd_at: expect.any(String),
      lots: '2.00',
    });
    expect(JSON.stringify(clients)).not.toMatch(/balance/);
    const rewards = expectOk(await app.request('GET', '/customers/me/partner/rewards', { token: c.customer.token }), 200).items;
    expect(rewards).toEqual([expect.objectContaining({ level: 1, amount: '3.50', status: 'accrued', lots: '2.00' })]);
    const today = new Date().toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const rewardsIn = async (query: string) =>
      expectOk(await app.request('GET', `/customers/me/partner/rewards?${query}`, { token: c.customer.token }), 200).items;
    expect(await rewardsIn(`from=${today}&to=${today}`)).toHaveLength(1);
    expect(await rewardsIn(`from=${yesterday}&to=${yesterday}`)).toEqual([]);
    expect422(
      await app.request('GET', `/customers/me/partner/rewards?from=${today}&to=${yesterday}`, { token: c.customer.token }),
      ['query', 'from'],
    );
    const below = expectOk(
      await app.request('GET', '/customers/me/partner/sub-partners', { token: b.customer.token }),
      200,
    ).items;
    expect(below).toEqual([expect.objectContaining({ id: c.id, code: c.code, depth: 1, clients: 1 })]);
  });
});

describe('reports', () => {
  async function report(token: string, type: string, params: Record<string, unknown>): Promise<any> {
    const requested = await app.request('POST', '/api/backoffice/reports', { token, body: { type, format: 'json', params } });
    expect(requested.status).toBe(202);
    const done = await waitFor(
      `the ${type} report`,
      async () => {
        const r = await app.request('GET', requested.body.status_url, { token });
        return r.body.status === 'completed' || r.body.status === 'failed' ? r.body : undefined;
      },
      60_000,
    );
    expect(done.status).toBe('completed');
    const file = await app.request('GET', done.download_url, { token });
    return typeof file.body === 'object' && file.body !== null && !Buffer.isBuffer(file.body) ? file.body : JSON.parse(file.text);
  }

  test('when ib_rewards and ib_acquisition are built for a chain, then they give each level its rewards, clients, FTDs and lots; an own-scope agent sees no rows', async () => {
    const { a, b, c, login } = await chain();
    await roundTurn(app, admin, login, 2);
    const today = new Date().toISOString().slice(0, 10);
    const rewards = await report(admin, 'ib_rewards', { from: today, to: today, partner_id: a.id });
    expect(rewards.rewards).toEqual([
      expect.objectContaining({ partner_id: a.id, level: 3, orders: 1, lots: 2, pending: '1.40', paid: '0.00' }),
    ]);
    const all = await report(admin, 'ib_rewards', { from: today, to: today });
    expect(all.rewards.filter((r: any) => [b.id, c.id].includes(r.partner_id)).map((r: any) => [r.level, r.pending])).toEqual(
      expect.arrayContaining([
        [1, '3.50'],
        [2, '2.10'],
      ]),
    );
    const acquisition = await report(admin, 'ib_acquisition', { from: today, to: today, partner_id: a.id });
    expect(acquisition.partners).toEqual([
      expect.objectContaining({ partner_id: a.id, level: 3, registrations: 1, ftds: 1, volume: 2 }),
    ]);

    const agent = await createStaff(app, ['view_reports'], admin);
    await sql(app, `update staff_users set data_scope = 'own' where id = ?`, [agent.id]);
    const { access_token: token } = await loginStaff(app, agent.email, agent.password);
    expect((await report(token, 'ib_rewards', { from: today, to: today, partner_id: a.id })).rewards).toEqual([]);
    expect((await report(token, 'ib_acquisition', { from: today, to: today, partner_id: a.id })).partners).toEqual([]);
  });
});
