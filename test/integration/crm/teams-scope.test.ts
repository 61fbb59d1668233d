import Decimal from 'decimal.js';
import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { openSse, type SseClient } from '../../helpers/sse-client';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';
import { FILES, upload } from '../compliance/compliance-kit';
import { ROUTES } from '../../../src/api/routes';
import { PERMISSIONS } from '../../../src/domain/identity/permissions';
import { walletOf, withdraw } from '../money/money-kit';
import { createIntent, createProvider } from '../payments/payments-kit';
import { buildReport, csvObjects } from '../reports/report-kit';

/**
 * Teams and data scope: an agent limited to its team's customers gets 404 for every other
 * customer's data, on every surface (customers, accounts, ledger, documents, withdrawals, the
 * back-office stream, reports, API tokens), and lists count only what it may see.
 */
jest.setTimeout(120_000);

let app: TestApp;
let admin: string;
let east: string;
let eastNorth: string;
let west: string;
let eastC: LoggedIn;
let northC: LoggedIn;
let westC: LoggedIn;
let agent: LoggedIn;
const streams: SseClient[] = [];

const AGENT_PERMISSIONS = [
  'view_customers',
  'manage_customers',
  'manage_accounts',
  'approve_withdrawals',
  'manage_compliance',
  'view_events',
  'view_reports',
  'view_audit',
  'manage_api_tokens',
  'approve_deposits',
] as const;

function ok<T = any>(res: { status: number; body: T; text: string }, status: number): T {
  if (res.status === 500) console.error(JSON.stringify(app.logs.filter((l) => Number(l.level) >= 50).slice(-2)));
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status} ${res.text}`);
  return res.body;
}

async function team(name: string, parent?: string): Promise<string> {
  return ok(await app.request('POST', '/api/admin/teams', { token: admin, body: { name, parent_team_id: parent } }), 201).id;
}

async function join(teamId: string, userId: string, role: 'member' | 'lead' = 'member'): Promise<void> {
  ok(await app.request('PUT', `/api/admin/teams/${teamId}/members/${userId}`, { token: admin, body: { role } }), 200);
}

async function setScope(userId: string, scope: 'own' | 'team' | 'all'): Promise<void> {
  ok(await app.request('PATCH', `/api/admin/users/${userId}`, { token: admin, body: { data_scope: scope } }), 200);
}

async function assign(customerId: string, body: Record<string, unknown>): Promise<any> {
  return ok(await app.request('POST', `/api/crm/customers/${customerId}/assign`, { token: admin, body }), 200);
}

async function deposit(login: number, amount: number): Promise<void> {
  ok(await app.request('POST', `/api/backoffice/accounts/${login}/deposits`, { token: admin, body: { amount } }), 201);
}

async function waitForEvents<T>(read: () => Promise<T[]>, match: (e: T) => boolean): Promise<T[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const items = await read();
    if (items.some(match) || Date.now() > deadline) return items;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stream(token: string): Promise<SseClient> {
  const s = await openSse(`${app.baseUrl}/api/backoffice/stream?types=deposit.completed`, { authorization: `Bearer ${token}` });
  streams.push(s);
  return s;
}

beforeAll(async () => {
  app = await startTestApp({ label: 'crmscope', env: { OUTBOX_RELAY_INTERVAL_MS: '100' } });
  admin = await adminToken(app);
  east = await team('East');
  eastNorth = await team('East North', east);
  west = await team('West');
  eastC = await createCustomer(app, admin);
  northC = await createCustomer(app, admin);
  westC = await createCustomer(app, admin);
  await assign(eastC.id, { team_id: east });
  await assign(northC.id, { team_id: eastNorth });
  await assign(westC.id, { team_id: west });
  agent = await createStaff(app, [...AGENT_PERMISSIONS], admin);
  await join(east, agent.id);
  await setScope(agent.id, 'team');
});

afterEach(() => {
  for (const s of streams.splice(0)) s.close();
});

afterAll(() => app?.stop());

describe('teams and staff scope', () => {
  test('when a team is created and a user joins it, then the team lists the member and the user its team_ids and scope', async () => {
    const t = ok(await app.request('GET', `/api/admin/teams/${east}`, { token: admin }), 200);
    expect(t).toEqual(
      expect.objectContaining({
        name: 'East',
        parent_team_id: null,
        members: [expect.objectContaining({ user_id: agent.id, role: 'member' })],
      }),
    );
    const child = ok(await app.request('GET', `/api/admin/teams/${eastNorth}`, { token: admin }), 200);
    expect(child.parent_team_id).toBe(east);
    const user = ok(await app.request('GET', `/api/admin/users/${agent.id}`, { token: admin }), 200);
    expect(user).toEqual(expect.objectContaining({ data_scope: 'team', team_ids: [east] }));
    const list = ok(await app.request('GET', '/api/admin/teams', { token: admin }), 200);
    expect(list.items.map((x: { name: string }) => x.name)).toEqual(['East', 'East North', 'West']);
    // A new user, like every user before teams existed, sees all.
    const fresh = await createStaff(app, ['view_customers'], admin);
    expect(ok(await app.request('GET', `/api/admin/users/${fresh.id}`, { token: admin }), 200)).toEqual(
      expect.objectContaining({ data_scope: 'all', team_ids: [] }),
    );
    expect(ok(await app.request('GET', `/api/crm/customers/${westC.id}`, { token: fresh.token }), 200).id).toBe(westC.id);
  });

  test('when a team name is taken or its parent unknown, then 409 and 422; membership needs manage_users', async () => {
    expect((await app.request('POST', '/api/admin/teams', { token: admin, body: { name: 'east' } })).status).toBe(409);
    const bad = await app.request('POST', '/api/admin/teams', {
      token: admin,
      body: { name: 'Orphan', parent_team_id: '00000000-0000-4000-8000-000000000000' },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'parent_team_id']);
    expect(
      (await app.request('PUT', `/api/admin/teams/${east}/members/${agent.id}`, { token: agent.token, body: { role: 'lead' } }))
        .status,
    ).toBe(403);
    const loop = await app.request('PATCH', `/api/admin/teams/${east}`, { token: admin, body: { parent_team_id: eastNorth } });
    expect(loop.status).toBe(422);
  });
});

describe('the example: a team-scope agent of East and a West customer', () => {
  test('when the agent reads the West customer, its accounts, documents or withdrawal, then each is 404; East is 200', async () => {
    const westWallet = await walletOf(app, westC);
    const eastWallet = await walletOf(app, eastC);
    await deposit(westWallet, 500);
    await deposit(eastWallet, 500);
    const w = ok(await withdraw(app, westC, 50), 202);
    const doc = ok(await upload(app, westC.token, 'identity', FILES.pdf()), 201);

    for (const path of [
      `/api/crm/customers/${westC.id}`,
      `/api/crm/customers/${westC.id}/accounts`,
      `/api/crm/customers/${westC.id}/documents`,
      `/api/backoffice/withdrawals/${w.transaction_id}`,
      `/api/crm/accounts/${westWallet}`,
      `/api/backoffice/accounts/${westWallet}/ledger`,
      `/api/crm/documents/${doc.id}/file`,
    ]) {
      const res = await app.request('GET', path, { token: agent.token });
      expect({ path, status: res.status, code: res.body?.code }).toEqual({ path, status: 404, code: 'NOT_FOUND' });
    }
    for (const [path, body] of [
      [`/api/backoffice/withdrawals/${w.transaction_id}/approve`, {}],
      [`/api/crm/documents/${doc.id}/approve`, {}],
      [`/api/backoffice/accounts/${westWallet}/deposits`, { amount: 1 }],
      [`/api/crm/customers/${westC.id}/accounts`, { kind: 'demo', group_id: '00000000-0000-4000-8000-000000000000' }],
    ] as const) {
      const res = await app.request('POST', path, { token: agent.token, body });
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
    expect(
      (await app.request('PATCH', `/api/crm/customers/${westC.id}`, { token: agent.token, body: { affiliate_id: 'x' } })).status,
    ).toBe(404);
    // Nothing changed: the withdrawal still waits, the West wallet holds what it held.
    const [row] = await sql<{ status: string }>(app, 'select status from withdrawals where id = ?', [w.transaction_id]);
    expect(row!.status).toBe('pending');

    expect((await app.request('GET', `/api/crm/customers/${eastC.id}`, { token: agent.token })).status).toBe(200);
    expect((await app.request('GET', `/api/crm/customers/${eastC.id}/accounts`, { token: agent.token })).status).toBe(200);
    expect((await app.request('GET', `/api/crm/accounts/${eastWallet}`, { token: agent.token })).status).toBe(200);
  });

  test('when an agent holding every permission walks every staff read route about a West object, then each answers 404', async () => {
    const walker = await createStaff(
      app,
      PERMISSIONS.filter((p) => p !== 'view_customer_pii'),
      admin,
    );
    await join(east, walker.id);
    await setScope(walker.id, 'team');
    const westWallet = await walletOf(app, westC);
    const [w] = await sql<{ id: string }>(app, 'select id from withdrawals where customer_id = ? limit 1', [westC.id]);
    const [d] = await sql<{ id: string }>(app, 'select id from customer_documents where customer_id = ? limit 1', [westC.id]);
    const westTask = ok(
      await app.request('POST', '/api/crm/tasks', {
        token: admin,
        body: {
          title: 'West',
          kind: 'call',
          priority: 'low',
          due_at: new Date(Date.now() + 3600_000).toISOString(),
          customer_id: westC.id,
        },
      }),
      201,
    );
    const values: Record<string, string> = {
      customer_id: westC.id,
      login: String(westWallet),
      transaction_id: w!.id,
      document_id: d!.id,
      task_id: westTask.id,
    };
    const walked: string[] = [];
    for (const route of ROUTES) {
      if (route.method !== 'get' || route.access.kind === 'customer' || route.access.kind === 'public') continue;
      const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      if (names.length === 0 || !names.every((n) => n in values)) continue;
      const path = route.path.replace(/\{(\w+)\}/g, (_m, n: string) => values[n]!);
      const res = await app.request('GET', path, { token: walker.token });
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      walked.push(route.path);
    }
    // The walk really reached the customer-data routes (a broken match would walk none and pass).
    expect(walked).toEqual(
      expect.arrayContaining([
        '/api/crm/customers/{customer_id}',
        '/api/crm/customers/{customer_id}/accounts',
        '/api/crm/customers/{customer_id}/documents',
        '/api/backoffice/withdrawals/{transaction_id}',
        '/api/crm/accounts/{login}',
        '/api/backoffice/accounts/{login}/ledger',
        '/api/crm/documents/{document_id}/file',
        '/api/crm/tasks/{task_id}',
      ]),
    );
  });

  test('when the agent lists customers and withdrawals, then only East rows are listed and counted', async () => {
    const customers = ok(await app.request('GET', '/api/crm/customers?page_size=100', { token: agent.token }), 200);
    expect(customers.items.map((c: { id: string }) => c.id)).toEqual([eastC.id]);
    expect(customers.total).toBe(1);
    ok(await withdraw(app, eastC, 10), 202);
    const all = ok(await app.request('GET', '/api/backoffice/withdrawals?page_size=200', { token: admin }), 200);
    const mine = ok(await app.request('GET', '/api/backoffice/withdrawals?page_size=200', { token: agent.token }), 200);
    const eastWallet = await walletOf(app, eastC);
    expect(all.total).toBeGreaterThan(mine.total);
    expect(mine.total).toBe(mine.items.length);
    expect(mine.items.every((x: { login: number }) => x.login === eastWallet)).toBe(true);
  });

  test('when deposits happen for East and West, then the agent stream carries East events and no West event', async () => {
    const agentStream = await stream(agent.token);
    const adminStream = await stream(admin);
    expect(agentStream.status).toBe(200);
    const westWallet = await walletOf(app, westC);
    const eastWallet = await walletOf(app, eastC);
    await deposit(westWallet, 7);
    await deposit(eastWallet, 8);
    const customerOf = (e: { data: string }) => (JSON.parse(e.data) as { data: { login: number } }).data.login;
    await adminStream.waitFor((e) => customerOf(e) === westWallet, 15_000);
    await agentStream.waitFor((e) => customerOf(e) === eastWallet, 15_000);
    await adminStream.waitFor((e) => customerOf(e) === eastWallet, 15_000);
    expect(agentStream.events.filter((e) => customerOf(e) === westWallet)).toEqual([]);
  });

  test('when the agent builds a deposits_withdrawals report, then West rows are left out and the scope is recorded', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const body = { type: 'deposits_withdrawals', format: 'csv', params: { from: today, to: today } };
    const mine = await buildReport(app, agent.token, body);
    const everything = await buildReport(app, admin, body);
    const deposits = (text: string) =>
      csvObjects(text)
        .filter((r) => r.currency === 'USD')
        .reduce((sum, r) => sum.plus(r.deposits!), new Decimal(0));
    const [eastSum] = await sql<{ s: string }>(
      app,
      `select coalesce(sum(l.amount), 0)::text as s from ledger_entries l join accounts a on a.id = l.account_id
        where l.kind = 'deposit' and a.customer_id = ?`,
      [eastC.id],
    );
    expect(deposits(mine.file.text).toFixed(2)).toBe(new Decimal(eastSum!.s).toFixed(2));
    expect(deposits(everything.file.text).greaterThan(deposits(mine.file.text))).toBe(true);
    expect(mine.report.scope).toEqual({ data_scope: 'team', user_id: agent.id, team_ids: [east] });
    expect(everything.report.scope).toEqual({ data_scope: 'all', user_id: null, team_ids: [] });
    // Another user's report may hold rows outside the agent's scope: 404 to the agent.
    expect((await app.request('GET', `/api/backoffice/reports/${everything.report.id}`, { token: agent.token })).status).toBe(
      404,
    );
  });

  test('when the agent pulls the event feed or the deposit queue, then no West customer appears in them, and a West deposit is 404', async () => {
    const westWallet = await walletOf(app, westC);
    await deposit(westWallet, 3);
    const eventsOf = async (token: string) => {
      const res = ok(await app.request('GET', '/api/crm/events?limit=1000', { token }), 200);
      return res.items as Array<{ type: string; data: { login?: number; customer_id?: string; id?: string } }>;
    };
    const aboutWest = (e: { data: { login?: number; customer_id?: string; id?: string } }) =>
      e.data.login === westWallet || e.data.customer_id === westC.id || e.data.id === westC.id;
    const everything = await waitForEvents(() => eventsOf(admin), aboutWest);
    expect(everything.some(aboutWest)).toBe(true);
    const mine = await eventsOf(agent.token);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.filter(aboutWest)).toEqual([]);
    const psp = await createProvider(app, admin);
    const westIntent = ok(await createIntent(app, westC, { provider_id: psp.id, amount: 100, currency: 'USD' }), 201);
    const eastIntent = ok(await createIntent(app, eastC, { provider_id: psp.id, amount: 100, currency: 'USD' }), 201);
    const queue = ok(await app.request('GET', `/api/backoffice/deposits?provider_id=${psp.id}`, { token: agent.token }), 200);
    expect(queue.items.map((d: { id: string }) => d.id)).toEqual([eastIntent.id]);
    expect(queue.total).toBe(1);
    expect((await app.request('GET', `/api/backoffice/deposits/${westIntent.id}`, { token: agent.token })).status).toBe(404);
    expect((await app.request('GET', `/api/backoffice/deposits/${eastIntent.id}`, { token: agent.token })).status).toBe(200);
  });

  test("when the agent's API token reads a West customer, then 404 too: a token carries its issuer's scope", async () => {
    const issued = ok(
      await app.request('POST', '/api/crm/settings/api-tokens', {
        token: agent.token,
        body: { name: 'crm sync', scopes: ['view_customers'] },
      }),
      201,
    );
    expect((await app.request('GET', `/api/crm/customers/${westC.id}`, { token: issued.token })).status).toBe(404);
    expect((await app.request('GET', `/api/crm/customers/${eastC.id}`, { token: issued.token })).status).toBe(200);
  });

  test('when the agent filters the audit list by a West customer, then 404; unfiltered it lists only its customers', async () => {
    const res = await app.request('GET', `/api/admin/audit?entity_type=customer&entity_id=${westC.id}`, { token: agent.token });
    expect(res.status).toBe(404);
    const list = ok(await app.request('GET', '/api/admin/audit?page_size=200', { token: agent.token }), 200);
    expect(list.items.length).toBeGreaterThan(0);
    expect(list.items.every((a: { entity_id: string }) => a.entity_id === eastC.id)).toBe(true);
  });

  test('when the agent becomes lead of East, then it also sees the customers of East North; as member it did not', async () => {
    expect((await app.request('GET', `/api/crm/customers/${northC.id}`, { token: agent.token })).status).toBe(404);
    await join(east, agent.id, 'lead');
    try {
      expect((await app.request('GET', `/api/crm/customers/${northC.id}`, { token: agent.token })).status).toBe(200);
      expect((await app.request('GET', `/api/crm/customers/${westC.id}`, { token: agent.token })).status).toBe(404);
    } finally {
      await join(east, agent.id, 'member');
    }
  });

  test('when the agent’s scope or the team tree changes, then its same access token and API token see the change on their next request', async () => {
    const issued = ok(
      await app.request('POST', '/api/crm/settings/api-tokens', {
        token: agent.token,
        body: { name: 'sync', scopes: ['view_customers'] },
      }),
      201,
    );
    const reads = async () => ({
      session: (await app.request('GET', `/api/crm/customers/${westC.id}`, { token: agent.token })).status,
      apiToken: (await app.request('GET', `/api/crm/customers/${westC.id}`, { token: issued.token })).status,
    });
    expect(await reads()).toEqual({ session: 404, apiToken: 404 });
    await setScope(agent.id, 'all');
    try {
      expect(await reads()).toEqual({ session: 200, apiToken: 200 });
    } finally {
      await setScope(agent.id, 'team');
    }
    expect(await reads()).toEqual({ session: 404, apiToken: 404 });
    // West moved under East, with the agent its lead: the tree below East now holds West.
    await join(east, agent.id, 'lead');
    ok(await app.request('PATCH', `/api/admin/teams/${west}`, { token: admin, body: { parent_team_id: east } }), 200);
    try {
      expect(await reads()).toEqual({ session: 200, apiToken: 200 });
    } finally {
      ok(await app.request('PATCH', `/api/admin/teams/${west}`, { token: admin, body: { parent_team_id: null } }), 200);
      await join(east, agent.id, 'member');
    }
    expect(await reads()).toEqual({ session: 404, apiToken: 404 });
  });
});

describe('own scope, assignment and personal data', () => {
  test('when an own-scope user is made account manager of a customer, then it sees that one only, and customer.assigned is recorded', async () => {
    const own = await createStaff(app, ['view_customers'], admin);
    await setScope(own.id, 'own');
    expect((await app.request('GET', `/api/crm/customers/${westC.id}`, { token: own.token })).status).toBe(404);
    const answer = await assign(westC.id, { account_manager_id: own.id });
    expect(answer).toEqual({
      customer_id: westC.id,
      account_manager_id: own.id,
      team_id: west,
      previous_account_manager_id: null,
      previous_team_id: west,
    });
    const seen = ok(await app.request('GET', `/api/crm/customers/${westC.id}`, { token: own.token }), 200);
    expect(seen).toEqual(expect.objectContaining({ account_manager_id: own.id, team_id: west }));
    const list = ok(await app.request('GET', '/api/crm/customers', { token: own.token }), 200);
    expect(list.items.map((c: { id: string }) => c.id)).toEqual([westC.id]);
    const events = await sql<{ data: { account_manager_id: string } }>(
      app,
      `select data from domain_events where type = 'customer.assigned' and customer_id = ? order by seq desc limit 1`,
      [westC.id],
    );
    expect(events[0]!.data.account_manager_id).toBe(own.id);
    const audit = await sql(app, `select 1 from audit_entries where action = 'customer.assigned' and entity_id = ?`, [westC.id]);
    expect(audit.length).toBeGreaterThanOrEqual(2);
    await assign(westC.id, { account_manager_id: null });
  });

  test('when assignments name an unknown manager or team, or too many customers, then 422; without assign_customers 403', async () => {
    const bad = await app.request('POST', `/api/crm/customers/${eastC.id}/assign`, {
      token: admin,
      body: { account_manager_id: '00000000-0000-4000-8000-000000000000', team_id: '00000000-0000-4000-8000-000000000001' },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d: { loc: string[] }) => d.loc.join('.')).sort()).toEqual([
      'body.account_manager_id',
      'body.team_id',
    ]);
    expect(
      (await app.request('POST', `/api/crm/customers/${eastC.id}/assign`, { token: agent.token, body: { team_id: east } }))
        .status,
    ).toBe(403);
    const many = Array.from({ length: 1001 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    expect(
      (await app.request('POST', '/api/crm/customers/bulk-assign', { token: admin, body: { customer_ids: many, team_id: east } }))
        .status,
    ).toBe(422);
  });

  test('when customers are bulk-assigned, then all move at once; one outside the caller scope makes it 404 and nothing moves', async () => {
    const a = await createCustomer(app, admin);
    const b = await createCustomer(app, admin);
    const res = ok(
      await app.request('POST', '/api/crm/customers/bulk-assign', {
        token: admin,
        body: { customer_ids: [a.id, b.id], team_id: east },
      }),
      200,
    );
    expect(res.assigned).toBe(2);
    const assigner = await createStaff(app, ['assign_customers'], admin);
    await join(east, assigner.id);
    await setScope(assigner.id, 'team');
    const refused = await app.request('POST', '/api/crm/customers/bulk-assign', {
      token: assigner.token,
      body: { customer_ids: [a.id, westC.id], account_manager_id: assigner.id },
    });
    expect(refused.status).toBe(404);
    const rows = await sql<{ account_manager_id: string | null }>(app, 'select account_manager_id from customers where id = ?', [
      a.id,
    ]);
    expect(rows[0]!.account_manager_id).toBeNull();
    const done = await app.request('POST', '/api/crm/customers/bulk-assign', {
      token: assigner.token,
      body: { customer_ids: [a.id, b.id], account_manager_id: assigner.id },
    });
    expect(done.status).toBe(200);
  });

  test('when staff without view_customer_pii read customers, then emails are masked; with it they are whole', async () => {
    const seen = ok(await app.request('GET', `/api/crm/customers/${eastC.id}`, { token: agent.token }), 200);
    const [local, domain] = eastC.email.split('@');
    expect(seen.email).toBe(`${local![0]}***@${domain}`);
    const list = ok(await app.request('GET', '/api/crm/customers', { token: agent.token }), 200);
    expect(list.items.every((c: { email: string }) => c.email.includes('***@'))).toBe(true);
    const full = ok(await app.request('GET', `/api/crm/customers/${eastC.id}`, { token: admin }), 200);
    expect(full.email).toBe(eastC.email);
  });
});

describe('auto-assignment', () => {
  test('when country rules and round robin are set, then new customers of that country go to the team, members in turn', async () => {
    const m1 = await createStaff(app, ['view_customers'], admin);
    const m2 = await createStaff(app, ['view_customers'], admin);
    const dach = await team('DACH');
    await join(dach, m1.id);
    await join(dach, m2.id);
    const settings = ok(
      await app.request('PATCH', '/api/admin/settings', {
        token: admin,
        body: { assignment: { strategy: 'round_robin', country_rules: [{ countries: ['DE', 'AT'], team_id: dach }] } },
      }),
      200,
    );
    expect(settings.assignment).toEqual({
      strategy: 'round_robin',
      default_manager_id: null,
      country_rules: [{ countries: ['DE', 'AT'], team_id: dach }],
    });
    const make = async (country: string) =>
      ok(
        await app.request('POST', '/api/crm/customers', {
          token: admin,
          body: {
            email: `auto-${Math.random().toString(36).slice(2)}@client.test`,
            password: 'customer-password-1',
            first_name: 'Auto',
            last_name: 'Assigned',
            country,
          },
        }),
        201,
      );
    const made = [await make('DE'), await make('AT'), await make('DE')];
    const rows = await sql<{ id: string; account_manager_id: string; team_id: string }>(
      app,
      `select id, account_manager_id, team_id from customers where id = any(?::uuid[])`,
      [`{${made.map((c) => c.id).join(',')}}`],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    const managers = made.map((c) => byId.get(c.id)!.account_manager_id);
    expect(made.every((c) => byId.get(c.id)!.team_id === dach)).toBe(true);
    expect(new Set(managers)).toEqual(new Set([m1.id, m2.id]));
    expect(managers[0]).toBe(managers[2]);
    expect(managers[0]).not.toBe(managers[1]);

    const other = await make('FR');
    const [fr] = await sql<{ account_manager_id: string | null; team_id: string | null }>(
      app,
      'select account_manager_id, team_id from customers where id = ?',
      [other.id],
    );
    expect(fr).toEqual({ account_manager_id: null, team_id: null });
    const audit = await sql(app, `select 1 from audit_entries where action = 'settings.updated' and after ? 'assignment'`);
    expect(audit.length).toBeGreaterThan(0);

    const unknown = await app.request('PATCH', '/api/admin/settings', {
      token: admin,
      body: {
        assignment: { strategy: 'none', country_rules: [{ countries: ['DE'], team_id: '00000000-0000-4000-8000-000000000000' }] },
      },
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0].loc).toEqual(['body', 'assignment', 'country_rules', 0, 'team_id']);
  });
});
