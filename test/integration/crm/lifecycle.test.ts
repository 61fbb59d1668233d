import { randomBytes } from 'node:crypto';
import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { decodedMessage } from '../../helpers/mail';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { fundedAccount, openOrder, setUpMarket } from '../../helpers/trading';
import { rolloverPassedToday, runEod } from '../eod/eod-kit';
import { mailsTo, RESET_URL } from '../mail/password-reset-kit';
import { Migration20261128110000_CustomerLifecycle } from '../../../src/db/migrations/Migration20261128110000_CustomerLifecycle';

jest.setTimeout(120_000);

let smtp: SmtpSink;
let app: TestApp;
let admin: string;

beforeAll(async () => {
  smtp = await startSmtpSink();
  app = await startTestApp({ label: 'crmlife', env: { SMTP_URL: smtp.url, PASSWORD_RESET_URL: RESET_URL } });
  admin = await adminToken(app);
});
afterAll(async () => {
  await app?.stop();
  await smtp?.close();
});

async function customerOf(id: string): Promise<any> {
  const res = await app.request('GET', `/api/crm/customers/${id}`, { token: admin });
  expect(res.status).toBe(200);
  return res.body;
}

async function lifecycleBecomes(id: string, stage: string): Promise<any> {
  return waitFor(`customer ${id} to be ${stage}`, async () => {
    const c = await customerOf(id);
    return c.lifecycle === stage ? c : undefined;
  });
}

async function lifecycleEvents(id: string): Promise<Array<{ from: string; to: string }>> {
  const rows = await sql<{ data: any }>(
    app,
    `select data from domain_events where type = 'customer.lifecycle_changed' and customer_id = ? order by seq`,
    [id],
  );
  return rows.map((r) => ({ from: r.data.from, to: r.data.to }));
}

function newEmail(label: string): string {
  return `${label}-${randomBytes(4).toString('hex')}@broker.test`;
}

describe('the lifecycle follows the events', () => {
  test('when a customer is verified, funded and trades, then it moves registered → verified → funded → active, with ftd_at and ftd_amount once', async () => {
    const market = await setUpMarket(app, admin);
    const customer = await createCustomer(app, admin);
    expect((await customerOf(customer.id)).lifecycle).toBe('registered');

    const level = await app.request('PATCH', `/api/crm/customers/${customer.id}`, {
      token: admin,
      body: { verification_level: 1 },
    });
    expect(level.status).toBe(200);
    await lifecycleBecomes(customer.id, 'verified');

    const login = await fundedAccount(app, admin, customer.id, market.groupId, 250);
    const funded = await lifecycleBecomes(customer.id, 'funded');
    expect(funded.ftd_amount).toBe('250.00');
    expect(Date.parse(funded.ftd_at)).toBeGreaterThan(Date.now() - 60_000);
    // A second deposit leaves the first one's figures.
    expect(
      (await app.request('POST', `/api/backoffice/accounts/${login}/deposits`, { token: admin, body: { amount: 99 } })).status,
    ).toBe(201);

    const ticket = await openOrder(app, admin, login);
    expect((await app.request('POST', `/orders/${ticket}/close`, { token: admin })).status).toBe(200);
    const active = await lifecycleBecomes(customer.id, 'active');
    expect(active.ftd_amount).toBe('250.00');
    expect(active.ftd_at).toBe(funded.ftd_at);
    expect(await lifecycleEvents(customer.id)).toEqual([
      { from: 'registered', to: 'verified' },
      { from: 'verified', to: 'funded' },
      { from: 'funded', to: 'active' },
    ]);

    // The end of day makes it dormant once its last close is older than dormant_after_days.
    expect((await app.request('PATCH', '/api/admin/settings', { token: admin, body: { dormant_after_days: 2 } })).status).toBe(
      200,
    );
    await sql(app, `update orders set closed_at = now() - interval '3 days' where ticket = ?`, [ticket]);
    const today = await rolloverPassedToday(app, admin);
    const run = await runEod(app, admin, today);
    expect(run.status).toBe('completed');
    expect((await customerOf(customer.id)).lifecycle).toBe('dormant');
    // A new close brings it back.
    const next = await openOrder(app, admin, login);
    expect((await app.request('POST', `/orders/${next}/close`, { token: admin })).status).toBe(200);
    await lifecycleBecomes(customer.id, 'active');
    expect((await lifecycleEvents(customer.id)).slice(3)).toEqual([
      { from: 'active', to: 'dormant' },
      { from: 'dormant', to: 'active' },
    ]);
  });

  test('when a registered customer deposits first, then it skips straight to funded and a later verification does not move it back', async () => {
    const market = await setUpMarket(app, admin);
    const customer = await createCustomer(app, admin);
    await fundedAccount(app, admin, customer.id, market.groupId, 10);
    await lifecycleBecomes(customer.id, 'funded');
    expect(
      (await app.request('PATCH', `/api/crm/customers/${customer.id}`, { token: admin, body: { verification_level: 2 } })).status,
    ).toBe(200);
    await waitFor('the verification event to be relayed', async () => {
      const [row] = await sql(
        app,
        `select 1 from domain_events where type = 'customer.verified' and customer_id = ? and published_at is not null`,
        [customer.id],
      );
      return row;
    });
    expect((await customerOf(customer.id)).lifecycle).toBe('funded');
    expect(await lifecycleEvents(customer.id)).toEqual([{ from: 'registered', to: 'funded' }]);
  });
});

test('when the lifecycle is introduced, then existing customers take the stage their history gives them', async () => {
  const market = await setUpMarket(app, admin);
  const depositor = await createCustomer(app, admin);
  await fundedAccount(app, admin, depositor.id, market.groupId, 40);
  await lifecycleBecomes(depositor.id, 'funded');
  const verified = await createCustomer(app, admin);
  const plain = await createCustomer(app, admin);
  // As before the migration: no stage, no first deposit.
  await sql(app, `update customers set lifecycle = 'registered', ftd_at = null, ftd_amount = null where id in (?, ?, ?)`, [
    depositor.id,
    verified.id,
    plain.id,
  ]);
  await sql(app, 'update customers set verification_level = 2 where id = ?', [verified.id]);

  const migration = new Migration20261128110000_CustomerLifecycle(
    app.runtime.services.orm.em.getDriver() as any,
    app.runtime.services.orm.config as any,
  );
  await migration.up();
  const backfill = migration.getQueries().filter((q) => typeof q === 'string' && q.startsWith('update "customers"')) as string[];
  expect(backfill).toHaveLength(3);
  for (const statement of backfill) await sql(app, statement);

  const funded = await customerOf(depositor.id);
  expect(funded).toMatchObject({ lifecycle: 'funded', ftd_amount: '40.00', ftd_at: expect.any(String) });
  expect((await customerOf(verified.id)).lifecycle).toBe('verified');
  expect((await customerOf(plain.id)).lifecycle).toBe('registered');
});

test('when staff close a customer, then its sessions end, new accounts are 409 CUSTOMER_CLOSED, it can still log in, and nothing moves it again', async () => {
  const market = await setUpMarket(app, admin);
  const customer: LoggedIn = await createCustomer(app, admin);
  const login = await fundedAccount(app, admin, customer.id, market.groupId, 100);
  await lifecycleBecomes(customer.id, 'funded');

  const closed = await app.request('POST', `/api/crm/customers/${customer.id}/close`, {
    token: admin,
    body: { reason: 'Asked to leave' },
  });
  expect(closed.status).toBe(200);
  expect(closed.body).toMatchObject({ lifecycle: 'closed', closed_at: expect.any(String) });
  expect((await app.request('GET', '/customers/me', { token: customer.token })).status).toBe(401);

  const refused = await app.request('POST', `/api/crm/customers/${customer.id}/accounts`, {
    token: admin,
    body: { kind: 'live', group_id: market.groupId },
  });
  expect(refused.status).toBe(409);
  expect(refused.body.code).toBe('CUSTOMER_CLOSED');
  const again = await app.request('POST', '/api/customer/login', {
    body: { email: customer.email, password: customer.password },
  });
  expect(again.status).toBe(200);
  // Its money can still leave: a withdrawal from the wallet is accepted for review.
  const [wallet] = await sql<{ login: string }>(
    app,
    `select login::text as login from accounts where customer_id = ? and kind = 'wallet'`,
    [customer.id],
  );
  const walletDeposit = await app.request('POST', `/api/backoffice/accounts/${wallet!.login}/deposits`, {
    token: admin,
    body: { amount: 30 },
  });
  expect(walletDeposit.status).toBe(201);
  const withdrawal = await app.request('POST', '/customers/me/withdraw', {
    token: again.body.access_token,
    body: { amount: 20, payment_data: { iban: 'DE89370400440532013000' } },
  });
  expect(withdrawal.status).toBe(202);

  // A trade after closing leaves it closed.
  const ticket = await openOrder(app, admin, login);
  expect((await app.request('POST', `/orders/${ticket}/close`, { token: admin })).status).toBe(200);
  await waitFor('the close to be relayed', async () => {
    const [row] = await sql(
      app,
      `select 1 from domain_events where type = 'order.closed' and aggregate_id = ? and published_at is not null`,
      [String(ticket)],
    );
    return row;
  });
  expect((await customerOf(customer.id)).lifecycle).toBe('closed');
  expect((await lifecycleEvents(customer.id)).at(-1)).toEqual({ from: 'funded', to: 'closed' });
  const [audit] = await sql<{ after: any }>(
    app,
    `select after from audit_entries where action = 'customer.closed' and entity_id = ?`,
    [customer.id],
  );
  expect(audit!.after).toMatchObject({ reason: 'Asked to leave', sessions_revoked: 1 });
});

test('when sales statuses are set, then customers take only known keys and a key in use cannot be removed', async () => {
  const customer = await createCustomer(app, admin);
  const put = await app.request('PUT', '/api/admin/sales-statuses', {
    token: admin,
    body: [
      { key: 'new', name: 'New', position: 1, is_final: false },
      { key: 'contacted', name: 'Contacted', position: 2, is_final: false },
      { key: 'won', name: 'Won', position: 3, is_final: true },
    ],
  });
  expect(put.status).toBe(200);
  expect(put.body.items.map((s: any) => s.key)).toEqual(['new', 'contacted', 'won']);

  const unknown = await app.request('PATCH', `/api/crm/customers/${customer.id}`, {
    token: admin,
    body: { sales_status: 'lost' },
  });
  expect(unknown.status).toBe(422);
  expect(unknown.body.detail[0].loc).toEqual(['body', 'sales_status']);
  const set = await app.request('PATCH', `/api/crm/customers/${customer.id}`, {
    token: admin,
    body: { sales_status: 'contacted' },
  });
  expect(set.status).toBe(200);
  expect(set.body.sales_status).toBe('contacted');

  const inUse = await app.request('PUT', '/api/admin/sales-statuses', {
    token: admin,
    body: [{ key: 'new', name: 'New', position: 1, is_final: false }],
  });
  expect(inUse.status).toBe(409);
  expect(inUse.body.code).toBe('SALES_STATUS_IN_USE');
  expect((await app.request('GET', '/api/admin/sales-statuses', { token: admin })).body.items).toHaveLength(3);

  const twice = await app.request('PUT', '/api/admin/sales-statuses', {
    token: admin,
    body: [
      { key: 'new', name: 'New', position: 1, is_final: false },
      { key: 'new', name: 'Again', position: 2, is_final: false },
    ],
  });
  expect(twice.status).toBe(422);

  const agent = await createStaff(app, ['view_customers'], admin);
  expect((await app.request('PUT', '/api/admin/sales-statuses', { token: agent.token, body: [] })).status).toBe(403);
  // Once no customer has it, it can go.
  await app.request('PATCH', `/api/crm/customers/${customer.id}`, { token: admin, body: { sales_status: null } });
  const removed = await app.request('PUT', '/api/admin/sales-statuses', {
    token: admin,
    body: [{ key: 'new', name: 'New', position: 1, is_final: false }],
  });
  expect(removed.status).toBe(200);
});

test('when a lead is entered and invited, then it has no password until it chooses one through the mail, which registers it', async () => {
  const email = newEmail('lead');
  const created = await app.request('POST', '/api/crm/leads', {
    token: admin,
    body: {
      email,
      first_name: 'Lena',
      last_name: 'Lead',
      country: 'AT',
      lead_source: 'webinar',
      lead_campaign: 'autumn',
      partner_code: 'P-1',
    },
  });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ lifecycle: 'lead', lead_source: 'webinar', lead_campaign: 'autumn', partner_code: 'P-1' });
  const id = created.body.id as string;
  expect(await sql(app, 'select id from accounts where customer_id = ?', [id])).toEqual([]);
  const dup = await app.request('POST', '/api/crm/leads', { token: admin, body: { email, first_name: 'L', last_name: 'L' } });
  expect(dup.status).toBe(409);
  expect(dup.body.code).toBe('EMAIL_TAKEN');

  const invited = await app.request('POST', `/api/crm/leads/${id}/invite`, { token: admin });
  expect(invited.status).toBe(202);
  const mail = await waitFor('the invitation', async () => mailsTo(smtp, email)[0]);
  const text = decodedMessage(mail.raw);
  expect(text).toContain('choose a password');
  const token = /https:\/\/portal\.broker\.test\/reset\?token=([A-Za-z0-9_-]+)/.exec(text)![1]!;

  const password = 'Copper-lantern-harbour-71';
  expect((await app.request('POST', '/api/customer/login', { body: { email, password } })).status).toBe(401);
  const reset = await app.request('POST', '/customers/password-reset/confirm', { body: { token, new_password: password } });
  expect(reset.status).toBe(204);
  expect((await customerOf(id)).lifecycle).toBe('registered');
  expect(await lifecycleEvents(id)).toEqual([{ from: 'lead', to: 'registered' }]);
  expect((await app.request('POST', '/api/customer/login', { body: { email, password } })).status).toBe(200);
  const again = await app.request('POST', `/api/crm/leads/${id}/invite`, { token: admin });
  expect(again.status).toBe(409);
  expect(again.body.code).toBe('NOT_A_LEAD');
});

test('when staff write notes, then only the author edits them within a day, deletion is soft and needs manage_customers, and all of it is audited', async () => {
  const customer = await createCustomer(app, admin);
  const author = await createStaff(app, ['view_customers'], admin);
  const other = await createStaff(app, ['view_customers'], admin);
  const notes = `/api/crm/customers/${customer.id}/notes`;

  const added = await app.request('POST', notes, { token: author.token, body: { body: 'Called, prefers mail', pinned: true } });
  expect(added.status).toBe(201);
  expect(added.body).toMatchObject({ author_id: author.id, body: 'Called, prefers mail', pinned: true });
  const note = `${notes}/${added.body.id}`;
  expect((await app.request('POST', notes, { token: author.token, body: { body: '' } })).status).toBe(422);

  const notAuthor = await app.request('PATCH', note, { token: other.token, body: { body: 'Mine now' } });
  expect(notAuthor.status).toBe(403);
  expect(notAuthor.body.code).toBe('NOT_NOTE_AUTHOR');
  const edited = await app.request('PATCH', note, { token: author.token, body: { body: 'Called twice, prefers mail' } });
  expect(edited.status).toBe(200);
  expect(edited.body.body).toBe('Called twice, prefers mail');

  await sql(app, `update customer_notes set created_at = now() - interval '25 hours' where id = ?`, [added.body.id]);
  const locked = await app.request('PATCH', note, { token: author.token, body: { pinned: false } });
  expect(locked.status).toBe(409);
  expect(locked.body.code).toBe('NOTE_LOCKED');

  expect((await app.request('DELETE', note, { token: author.token })).status).toBe(403);
  expect((await app.request('DELETE', note, { token: admin })).status).toBe(204);
  expect((await app.request('GET', notes, { token: author.token })).body.items).toEqual([]);
  expect((await app.request('DELETE', note, { token: admin })).status).toBe(404);

  const actions = await sql<{ action: string }>(
    app,
    `select action from audit_entries where entity_type = 'customer_note' and entity_id = ? order by created_at`,
    [added.body.id],
  );
  expect(actions.map((a) => a.action)).toEqual(['note.created', 'note.updated', 'note.deleted']);
  expect(
    (await app.request('GET', `/api/crm/customers/00000000-0000-4000-8000-000000000000/notes`, { token: admin })).status,
  ).toBe(404);
});

test('when the timeline is read, then events, notes and staff actions come newest first, filtered by kind and paged by before, and reading writes nothing', async () => {
  const customer = await createCustomer(app, admin);
  await app.request('PATCH', `/api/crm/customers/${customer.id}`, { token: admin, body: { affiliate_id: 'aff-1' } });
  await app.request('POST', `/api/crm/customers/${customer.id}/notes`, { token: admin, body: { body: 'First note' } });
  await app.request('POST', `/api/crm/customers/${customer.id}/notes`, { token: admin, body: { body: 'Second note' } });
  const timeline = `/api/crm/customers/${customer.id}/timeline`;

  const counts = async () =>
    (await sql<{ n: number }>(app, `select (select count(*) from audit_entries) + (select count(*) from domain_events) as n`))[0]!
      .n;
  const before = await counts();
  const all = await app.request('GET', timeline, { token: admin });
  expect(all.status).toBe(200);
  const kinds = all.body.items.map((i: any) => i.kind);
  expect(kinds).toEqual(expect.arrayContaining(['event', 'note', 'staff_action']));
  const ats = all.body.items.map((i: any) => Date.parse(i.at));
  expect([...ats].sort((a, b) => b - a)).toEqual(ats);
  expect(all.body.items).toContainEqual(
    expect.objectContaining({
      kind: 'event',
      summary: 'customer.created',
      actor: null,
      ref: { type: 'event', id: expect.any(String) },
    }),
  );
  expect(all.body.items).toContainEqual(expect.objectContaining({ kind: 'staff_action', summary: 'customer.updated' }));
  expect(await counts()).toBe(before);

  const onlyNotes = await app.request('GET', `${timeline}?types=note&limit=1`, { token: admin });
  if (onlyNotes.status !== 200) throw new Error(onlyNotes.text);
  expect(onlyNotes.body.items).toEqual([expect.objectContaining({ kind: 'note', summary: 'Second note' })]);
  expect(onlyNotes.body.next_before).toBe(onlyNotes.body.items[0].at);
  const page2 = await app.request(
    'GET',
    `${timeline}?types=note&limit=1&before=${encodeURIComponent(onlyNotes.body.next_before)}`,
    {
      token: admin,
    },
  );
  expect(page2.body.items).toEqual([expect.objectContaining({ kind: 'note', summary: 'First note' })]);

  expect((await app.request('GET', `${timeline}?types=gossip`, { token: admin })).status).toBe(422);
  const agent = await createStaff(app, [], admin);
  expect((await app.request('GET', timeline, { token: agent.token })).status).toBe(403);
  expect(
    (await app.request('GET', `/api/crm/customers/00000000-0000-4000-8000-000000000000/timeline`, { token: admin })).status,
  ).toBe(404);
});

test("when a customer has tasks and conversation messages, then they join its timeline, and another customer's do not", async () => {
  const customer = await createCustomer(app, admin);
  const other = await createCustomer(app, admin);
  const task = (title: string, customerId: string) =>
    app.request('POST', '/api/crm/tasks', {
      token: admin,
      body: {
        title,
        due_at: new Date(Date.now() + 86_400_000).toISOString(),
        kind: 'call',
        priority: 'normal',
        customer_id: customerId,
      },
    });
  expect((await task('Welcome call', customer.id)).status).toBe(201);
  expect((await task('Not theirs', other.id)).status).toBe(201);
  const started = await app.request('POST', '/customers/me/conversations', {
    token: customer.token,
    body: { subject: 'Deposit', body: 'Where is my deposit' },
  });
  expect(started.status).toBe(201);
  const timeline = `/api/crm/customers/${customer.id}/timeline`;
  const res = await app.request('GET', `${timeline}?types=task,message`, { token: admin });
  expect(res.status).toBe(200);
  expect(res.body.items.map((i: any) => [i.kind, i.summary])).toEqual([
    ['message', 'Where is my deposit'],
    ['task', 'Welcome call'],
  ]);
});
