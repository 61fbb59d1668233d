import { randomBytes } from 'node:crypto';
import { adminToken, createCustomer } from '../../helpers/identity';
import { Client } from 'pg';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { directDatabaseUrl } from '../../helpers/test-database';
import { expectLedgerBalanced, fundedAccount, setUpMarket } from '../../helpers/trading';
import { expectOk } from '../trading/trading-kit';

/**
 * A redeem and a deposit of one customer at once lock the same rows: the account, the campaign.
 * Both take the account first (see the lock order in src/domain/bonuses/promo-redeem.ts), so
 * neither waits for the other in a cycle: every request answers, none is cut by Postgres's
 * deadlock detector, and each account ends with both bonuses.
 */
jest.setTimeout(180_000);

let app: TestApp;
let admin: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'promolocks' });
  admin = await adminToken(app);
});
afterAll(() => app?.stop());
afterEach(() => expectLedgerBalanced(app));

async function market() {
  const { groupId } = await setUpMarket(app, admin);
  const programId = expectOk(
    await app.request('POST', '/api/crm/bonus-programs', {
      token: admin,
      body: {
        name: 'Lock order 10',
        currency: 'USD',
        kind: 'fixed',
        amount: 10,
        group_ids: [groupId],
        trigger: 'promo_code',
        first_deposit_only: false,
        release: { mode: 'on_target', lots_per_unit: 0.1 },
      },
    }),
    201,
  ).id;
  const now = Date.now();
  const campaign = expectOk(
    await app.request('POST', '/api/crm/campaigns', {
      token: admin,
      body: {
        name: 'Lock order',
        starts_at: new Date(now - 60_000).toISOString(),
        ends_at: new Date(now + 86_400_000).toISOString(),
        budget: { type: 'spend', limit: 100_000 },
      },
    }),
    201,
  ).id;
  const code = async (terms: Record<string, unknown>) =>
    expectOk(
      await app.request('POST', '/api/crm/promo-codes', {
        token: admin,
        body: {
          code: `L-${randomBytes(4).toString('hex').toUpperCase()}`,
          campaign_id: campaign,
          reward: { type: 'bonus', bonus_program_id: programId },
          max_per_customer: 1,
          ...terms,
        },
      }),
      201,
    ).code as string;
  return { groupId, campaign, armedCode: await code({ min_deposit: 1 }), appliedCode: await code({}) };
}

async function armedTrader(groupId: string, armedCode: string) {
  const customer = await createCustomer(app, admin);
  const live = await fundedAccount(app, admin, customer.id, groupId, 0);
  const armed = await app.request('POST', '/customers/me/promo-codes/redeem', {
    token: customer.token,
    body: { code: armedCode, login: live },
  });
  expect(expectOk(armed, 201).status).toBe('armed');
  return { customer, live };
}

/** How many sessions of the app's database wait for a row lock now. */
async function waitingOnLocks(): Promise<number> {
  const [row] = await sql<{ n: number }>(
    app,
    `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
  );
  return row!.n;
}

test('when a redeem waits for a campaign a deposit of the same account also needs, then the two queue one behind the other and both complete', async () => {
  const { groupId, campaign, armedCode, appliedCode } = await market();
  const { customer, live } = await armedTrader(groupId, armedCode);
  // Another session holds the campaign: the redeem queues for it first, then the deposit.
  const holder = new Client({ connectionString: directDatabaseUrl(app.databaseName) });
  await holder.connect();
  try {
    await holder.query('begin');
    await holder.query('select 1 from campaigns where id = $1 for update', [campaign]);
    const redeem = app.request('POST', '/customers/me/promo-codes/redeem', {
      token: customer.token,
      body: { code: appliedCode, login: live },
    });
    await waitFor('the redeem to wait for a lock', async () => (await waitingOnLocks()) >= 1 || undefined);
    const deposit = app.request('POST', `/api/backoffice/accounts/${live}/deposits`, { token: admin, body: { amount: 25 } });
    await waitFor('the deposit to wait for a lock', async () => (await waitingOnLocks()) >= 2 || undefined);
    await holder.query('commit');
    const [redeemed, deposited] = await Promise.all([redeem, deposit]);
    expect(expectOk(redeemed, 201).status).toBe('applied');
    expectOk(deposited, 201);
  } finally {
    await holder.end();
  }
  const account = expectOk(await app.request('GET', `/api/crm/accounts/${live}`, { token: admin }), 200);
  expect(account.credit).toBe('20.00');
});

test('when customers redeem a code of a campaign while a deposit grants their armed code of the same campaign, then no request deadlocks and each gets both bonuses', async () => {
  const { groupId, armedCode, appliedCode } = await market();

  const customers = await Promise.all(Array.from({ length: 8 }, () => armedTrader(groupId, armedCode)));

  for (let round = 0; round < 2; round++) {
    const answers = await Promise.all(
      customers.flatMap(({ customer, live }) => [
        app.request('POST', `/api/backoffice/accounts/${live}/deposits`, { token: admin, body: { amount: 25 } }),
        round === 0
          ? app.request('POST', '/customers/me/promo-codes/redeem', {
              token: customer.token,
              body: { code: appliedCode, login: live },
            })
          : app.request('GET', '/customers/me/bonuses', { token: customer.token }),
      ]),
    );
    expect(answers.map((a) => a.status).filter((s) => s >= 500)).toEqual([]);
    expect(answers.filter((a) => a.status !== 200 && a.status !== 201).map((a) => a.body)).toEqual([]);
  }
  for (const { live } of customers) {
    const account = expectOk(await app.request('GET', `/api/crm/accounts/${live}`, { token: admin }), 200);
    expect(account.credit).toBe('20.00');
  }
});
