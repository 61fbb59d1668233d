import { randomBytes } from 'node:crypto';
import { adminToken, createCustomer, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, setUpMarket } from '../../helpers/trading';
import { eventsOf, expectError, expectOk } from '../trading/trading-kit';

jest.setTimeout(120_000);

/** Campaigns and promo codes: validate, redeem, the limits counted under a lock, armed codes, errors. */
let app: TestApp;
let admin: string;
let groupId: string;
let programId: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'promo' });
  admin = await adminToken(app);
  groupId = (await setUpMarket(app, admin)).groupId;
  programId = expectOk(
    await app.request('POST', '/api/crm/bonus-programs', {
      token: admin,
      body: {
        name: 'Promo 50',
        currency: 'USD',
        kind: 'fixed',
        amount: 50,
        group_ids: [groupId],
        trigger: 'promo_code',
        first_deposit_only: false,
        release: { mode: 'on_target', lots_per_unit: 0.1 },
      },
    }),
    201,
  ).id;
});
afterAll(() => app?.stop());
afterEach(() => expectLedgerBalanced(app));

const uniqueCode = (prefix = 'P') => `${prefix}-${randomBytes(4).toString('hex').toUpperCase()}`;

async function code(terms: Record<string, unknown> = {}) {
  return expectOk(
    await app.request('POST', '/api/crm/promo-codes', {
      token: admin,
      body: { code: uniqueCode(), reward: { type: 'bonus', bonus_program_id: programId }, ...terms },
    }),
    201,
    'code',
  );
}

async function trader(deposit = 0): Promise<{ customer: LoggedIn; live: number }> {
  const customer = await createCustomer(app, admin);
  return { customer, live: await fundedAccount(app, admin, customer.id, groupId, deposit) };
}

const redeem = (c: LoggedIn, body: Record<string, unknown>, key?: string) =>
  app.request('POST', '/customers/me/promo-codes/redeem', {
    token: c.token,
    body,
    headers: key ? { 'idempotency-key': key } : {},
  });
const validate = (c: LoggedIn, body: Record<string, unknown>) =>
  app.request('POST', '/customers/me/promo-codes/validate', { token: c.token, body });

async function creditOf(login: number): Promise<string> {
  return expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token: admin }), 200).credit;
}

test('when a customer validates then redeems a code in other letter case, then the bonus is applied once and a second use is refused', async () => {
  const c = await code();
  const { customer, live } = await trader(100);
  const preview = expectOk(await validate(customer, { code: c.code.toLowerCase() }), 200, 'validate');
  expect(preview).toMatchObject({
    code: c.code,
    status: 'applied',
    reward: { type: 'bonus', bonus_program_id: programId, amount: '50.00' },
  });
  expect(await creditOf(live)).toBe('0.00');

  const first = await redeem(customer, { code: c.code.toLowerCase() }, 'redeem-once');
  const redemption = expectOk(first, 201, 'redeem');
  expect(redemption).toMatchObject({ code: c.code, status: 'applied' });
  expect(redemption.bonus_id).toBeDefined();
  expect((await redeem(customer, { code: c.code.toLowerCase() }, 'redeem-once')).body).toEqual(first.body);
  expect(await creditOf(live)).toBe('50.00');
  expectError(await redeem(customer, { code: c.code }), 409, 'PROMO_CODE_ALREADY_USED');
  expectError(await validate(customer, { code: c.code }), 409, 'PROMO_CODE_ALREADY_USED');
  const events = await eventsOf(app, 'promo.redeemed', c.id);
  expect(events).toHaveLength(1);
  expect(events[0]!.data).toMatchObject({ code: c.code, status: 'applied', login: live });
});

test('when a code is unknown or deactivated, then both answer 404 PROMO_CODE_NOT_FOUND; an expired one 409', async () => {
  const { customer } = await trader(0);
  expectError(await redeem(customer, { code: 'NO-SUCH-CODE' }), 404, 'PROMO_CODE_NOT_FOUND');
  const off = await code();
  expectOk(await app.request('PATCH', `/api/crm/promo-codes/${off.id}`, { token: admin, body: { active: false } }), 200);
  expectError(await redeem(customer, { code: off.code }), 404, 'PROMO_CODE_NOT_FOUND');
  const old = await code();
  await sql(app, `update promo_codes set expires_at = now() - interval '1 minute' where id = ?`, [old.id]);
  expectError(await validate(customer, { code: old.code }), 409, 'PROMO_CODE_EXPIRED');
});

test('when ten customers redeem the last use of a code at once, then exactly one gets 201 and the others PROMO_CODE_EXHAUSTED', async () => {
  const c = await code({ max_redemptions: 1 });
  const traders = await Promise.all(Array.from({ length: 10 }, () => trader(0)));
  const answers = await Promise.all(traders.map((t) => redeem(t.customer, { code: c.code })));
  expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
  for (const a of answers.filter((x) => x.status !== 201)) expectError(a, 409, 'PROMO_CODE_EXHAUSTED');
  const [row] = await sql<{ redemptions: number }>(app, 'select redemptions from promo_codes where id = ?', [c.id]);
  expect(row!.redemptions).toBe(1);
});

test('when a campaign budget of one use is spent, then the next customer gets PROMO_CODE_EXHAUSTED', async () => {
  const campaign = expectOk(
    await app.request('POST', '/api/crm/campaigns', {
      token: admin,
      body: {
        name: 'Spring',
        starts_at: '2026-01-01T00:00:00Z',
        ends_at: '2030-01-01T00:00:00Z',
        budget: { type: 'usage', limit: 1 },
      },
    }),
    201,
  );
  const c = await code({ campaign_id: campaign.id, max_per_customer: 5 });
  const a = await trader(0);
  const b = await trader(0);
  expectOk(await redeem(a.customer, { code: c.code }), 201);
  expectError(await redeem(b.customer, { code: c.code }), 409, 'PROMO_CODE_EXHAUSTED');
});

test('when a first-deposit code is redeemed before any deposit, then it is armed with a pending bonus the first qualifying deposit makes active', async () => {
  const c = await code({ first_deposit_only: true, min_deposit: 100 });
  const { customer, live } = await trader(0);
  const armed = expectOk(await redeem(customer, { code: c.code }), 201);
  expect(armed).toEqual({ id: armed.id, code: c.code, status: 'armed', bonus_id: expect.any(String) });
  const mine = async () =>
    expectOk(await app.request('GET', '/customers/me/bonuses', { token: customer.token }), 200).items.find(
      (b: { id: string }) => b.id === armed.bonus_id,
    );
  expect(await mine()).toMatchObject({ status: 'pending', amount: '50.00', login: null, source: { type: 'promo' } });
  expectOk(await app.request('POST', `/api/backoffice/accounts/${live}/deposits`, { token: admin, body: { amount: 50 } }), 201);
  expect(await creditOf(live)).toBe('0.00');
  expect((await mine()).status).toBe('pending');
  expectOk(await app.request('POST', `/api/backoffice/accounts/${live}/deposits`, { token: admin, body: { amount: 150 } }), 201);
  expect(await creditOf(live)).toBe('50.00');
  expect(await mine()).toMatchObject({ status: 'active', amount: '50.00', login: live });
  const [row] = await sql<{ status: string }>(app, 'select status from promo_redemptions where id = ?', [armed.id]);
  expect(row!.status).toBe('applied');
  // Having deposited, the customer is no longer eligible for another first-deposit code.
  const other = await code({ first_deposit_only: true });
  expectError(await validate(customer, { code: other.code }), 403, 'PROMO_NOT_ELIGIBLE');
});

test('when the customer is outside the code’s countries, then 403 PROMO_NOT_ELIGIBLE', async () => {
  const c = await code({ countries: ['FR'] });
  const { customer } = await trader(0);
  expectError(await validate(customer, { code: c.code }), 403, 'PROMO_NOT_ELIGIBLE');
});

test('when a customer makes more than ten attempts in an hour, then 429', async () => {
  const { customer } = await trader(0);
  for (let i = 0; i < 10; i++) expect((await validate(customer, { code: `GUESS-${i}000` })).status).toBe(404);
  const res = await validate(customer, { code: 'GUESS-9999' });
  expect(res.status).toBe(429);
  expect(res.headers.get('retry-after')).toBeTruthy();
});

test('when staff ask for the promotions report, then each code shows its redemptions, bonus granted, released, forfeited and net cost', async () => {
  const campaign = expectOk(
    await app.request('POST', '/api/crm/campaigns', {
      token: admin,
      body: { name: 'Report', starts_at: '2026-01-01T00:00:00Z', ends_at: '2030-01-01T00:00:00Z' },
    }),
    201,
  );
  const c = await code({ campaign_id: campaign.id, max_per_customer: 3 });
  const { customer } = await trader(0);
  const redeemed = expectOk(await redeem(customer, { code: c.code }), 201);
  expectOk(
    await app.request('POST', `/api/crm/bonuses/${redeemed.bonus_id}/cancel`, { token: admin, body: { reason: 'report' } }),
    200,
  );
  const today = new Date().toISOString().slice(0, 10);
  const requested = await app.request('POST', '/api/backoffice/reports', {
    token: admin,
    body: { type: 'promotions', format: 'json', params: { from: today, to: today, campaign_id: campaign.id } },
  });
  expect(requested.status).toBe(202);
  const done = await waitFor(
    'the promotions report',
    async () => {
      const r = await app.request('GET', requested.body.status_url, { token: admin });
      return r.body.status === 'completed' || r.body.status === 'failed' ? r.body : undefined;
    },
    60_000,
  );
  expect(done.status).toBe('completed');
  const file = await app.request('GET', done.download_url, { token: admin });
  const body =
    typeof file.body === 'object' && file.body !== null && !Buffer.isBuffer(file.body) ? file.body : JSON.parse(file.text);
  expect(body.codes).toEqual([
    expect.objectContaining({
      code: c.code,
      redemptions: 1,
      granted: '50.00',
      released: '0.00',
      forfeited: '50.00',
      net_cost: '0.00',
    }),
  ]);
});
