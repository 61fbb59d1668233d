import { adminToken, createCustomer, createStaff } from '../../helpers/identity';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { fundedAccount, openOrder, setUpMarket } from '../../helpers/trading';

jest.setTimeout(120_000);

let app: TestApp;
let admin: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'conversations' });
  admin = await adminToken(app);
});
afterAll(async () => {
  await app?.stop();
});

async function start(token: string, body: Record<string, unknown>) {
  return app.request('POST', '/customers/me/conversations', { token, body });
}

describe('the customer side', () => {
  test('when a customer asks about its own order, then the conversation is open with its message and its first-response due time', async () => {
    const market = await setUpMarket(app, admin);
    const customer = await createCustomer(app, admin);
    const login = await fundedAccount(app, admin, customer.id, market.groupId);
    const ticket = await openOrder(app, admin, login);

    const before = Date.now();
    const res = await start(customer.token, {
      subject: 'Why was my order closed?',
      body: 'It closed without me',
      category: 'trading',
      ref: { type: 'order', id: String(ticket) },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      customer_id: customer.id,
      status: 'open',
      category: 'trading',
      ref: { type: 'order', id: String(ticket) },
      started_by: 'customer',
      messages: [{ author_type: 'customer', body: 'It closed without me', internal: false }],
    });
    const due = Date.parse(res.body.first_response_due_at);
    expect(due).toBeGreaterThanOrEqual(before + 240 * 60_000 - 1000);
    expect(due).toBeLessThanOrEqual(Date.now() + 240 * 60_000 + 1000);

    const list = await app.request('GET', '/customers/me/conversations', { token: customer.token });
    expect(list.body.items.map((c: any) => c.id)).toEqual([res.body.id]);
    const events = await sql<{ type: string }>(app, `select type from domain_events where aggregate_id = ? order by seq`, [
      res.body.id,
    ]);
    expect(events.map((e) => e.type)).toEqual(['conversation.created', 'conversation.message_added']);
  });

  test("when the ref is another customer's object or the conversation is another's, then 404 and nothing is kept", async () => {
    const market = await setUpMarket(app, admin);
    const owner = await createCustomer(app, admin);
    const other = await createCustomer(app, admin);
    const ticket = await openOrder(app, admin, await fundedAccount(app, admin, owner.id, market.groupId));

    for (const ref of [
      { type: 'order', id: String(ticket) },
      { type: 'withdrawal', id: '00000000-0000-4000-8000-000000000000' },
      { type: 'document', id: 'not-a-uuid' },
    ]) {
      const res = await start(other.token, { subject: 'Hi', body: 'About this', ref });
      expect(res.status).toBe(404);
    }
    expect(await sql(app, 'select 1 from conversations where customer_id = ?', [other.id])).toHaveLength(0);

    const mine = await start(owner.token, { subject: 'Mine', body: 'Mine' });
    expect((await app.request('GET', `/customers/me/conversations/${mine.body.id}`, { token: other.token })).status).toBe(404);
    const write = await app.request('POST', `/customers/me/conversations/${mine.body.id}/messages`, {
      token: other.token,
      body: { body: 'hello' },
    });
    expect(write.status).toBe(404);
  });

  test('when the input is bad, then 422 naming the field', async () => {
    const customer = await createCustomer(app, admin);
    for (const body of [
      { subject: '', body: 'x' },
      { subject: 'x'.repeat(201), body: 'x' },
      { subject: 'x', body: 'x'.repeat(10_001) },
      { subject: 'x', body: 'x', category: 'gossip' },
      { subject: 'x', body: 'x', ref: { type: 'account', id: '1' } },
      { subject: 'x', body: 'x', surprise: true },
    ]) {
      const res = await start(customer.token, body);
      expect(res.status).toBe(422);
    }
  });

  test('when a customer writes a 21st message within a minute, opening ones included, then 429 RATE_LIMITED with Retry-After and it is not kept', async () => {
    const customer = await createCustomer(app, admin);
    const first = await start(customer.token, { subject: 'One', body: 'm1' });
    expect(first.status).toBe(201);
    for (let i = 2; i <= 20; i++) {
      const res = await app.request('POST', `/customers/me/conversations/${first.body.id}/messages`, {
        token: customer.token,
        body: { body: `m${i}` },
      });
      expect(res.status).toBe(201);
    }
    const over = await start(customer.token, { subject: 'Two', body: 'm21' });
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('RATE_LIMITED');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(over.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    const reply = await app.request('POST', `/customers/me/conversations/${first.body.id}/messages`, {
      token: customer.token,
      body: { body: 'm21' },
    });
    expect(reply.status).toBe(429);
    expect(await sql(app, 'select 1 from conversation_messages where customer_id = ?', [customer.id])).toHaveLength(20);
  });
});

describe('the staff side', () => {
  test('when staff answer and add an internal note, then the customer sees the answer and never the note, on its routes and in events', async () => {
    const customer = await createCustomer(app, admin);
    const agent = await createStaff(app, ['view_conversations', 'reply_conversations'], admin);
    const c = (await start(customer.token, { subject: 'Deposit missing', body: 'Where is it?', category: 'payments' })).body;

    const queue = await app.request('GET', `/api/crm/conversations?status=open&assignee=unassigned&customer_id=${customer.id}`, {
      token: agent.token,
    });
    expect(queue.status).toBe(200);
    expect(queue.body.items.map((x: any) => x.id)).toEqual([c.id]);

    const note = await app.request('POST', `/api/crm/conversations/${c.id}/messages`, {
      token: agent.token,
      body: { body: 'SECRET-NOTE: check the provider', internal: true },
    });
    expect(note.status).toBe(201);
    expect(note.body.internal).toBe(true);
    const answer = await app.request('POST', `/api/crm/conversations/${c.id}/messages`, {
      token: agent.token,
      body: { body: 'It is on its way' },
    });
    expect(answer.status).toBe(201);

    const staffView = await app.request('GET', `/api/crm/conversations/${c.id}`, { token: agent.token });
    expect(staffView.body.messages.map((m: any) => m.body)).toEqual([
      'Where is it?',
      'SECRET-NOTE: check the provider',
      'It is on its way',
    ]);
    expect(staffView.body.first_response_at).not.toBeNull();

    const customerView = await app.request('GET', `/customers/me/conversations/${c.id}`, { token: customer.token });
    expect(customerView.body.messages.map((m: any) => m.body)).toEqual(['Where is it?', 'It is on its way']);
    expect(JSON.stringify(customerView.body)).not.toContain('SECRET-NOTE');
    const events = await sql<{ data: unknown }>(app, 'select data from domain_events where customer_id = ?', [customer.id]);
    expect(JSON.stringify(events)).not.toContain('SECRET-NOTE');

    const audit = await sql<{ action: string }>(
      app,
      `select action from audit_entries where entity_type = 'conversation' and entity_id = ? order by created_at`,
      [c.id],
    );
    expect(audit.map((a) => a.action)).toEqual(['conversation.note_added', 'conversation.replied']);
  });

  test('when staff assign, snooze and resolve, then the queue filters follow, each change is audited and the customer reopens it by writing', async () => {
    const customer = await createCustomer(app, admin);
    const agent = await createStaff(app, ['view_conversations', 'reply_conversations'], admin);
    const c = (await start(customer.token, { subject: 'Help', body: 'Please' })).body;

    const assign = await app.request('PATCH', `/api/crm/conversations/${c.id}`, {
      token: agent.token,
      body: { assignee_id: agent.id, priority: 'high' },
    });
    expect(assign.status).toBe(200);
    expect(assign.body).toMatchObject({ assignee_id: agent.id, priority: 'high', status: 'open' });
    const mine = await app.request('GET', '/api/crm/conversations?assignee=me', { token: agent.token });
    expect(mine.body.items.map((x: any) => x.id)).toEqual([c.id]);

    const past = await app.request('PATCH', `/api/crm/conversations/${c.id}`, {
      token: agent.token,
      body: { status: 'snoozed', snoozed_until: new Date(Date.now() - 1000).toISOString() },
    });
    expect(past.status).toBe(422);
    const until = new Date(Date.now() + 3600_000).toISOString();
    const snooze = await app.request('PATCH', `/api/crm/conversations/${c.id}`, {
      token: agent.token,
      body: { snoozed_until: until },
    });
    expect(snooze.body).toMatchObject({ status: 'snoozed', snoozed_until: until });

    const resolve = await app.request('PATCH', `/api/crm/conversations/${c.id}`, {
      token: agent.token,
      body: { status: 'resolved' },
    });
    expect(resolve.body).toMatchObject({ status: 'resolved', snoozed_until: null });
    expect(resolve.body.resolved_at).not.toBeNull();

    const back = await app.request('POST', `/customers/me/conversations/${c.id}/messages`, {
      token: customer.token,
      body: { body: 'Still broken' },
    });
    expect(back.status).toBe(201);
    const after = await app.request('GET', `/customers/me/conversations/${c.id}`, { token: customer.token });
    expect(after.body.status).toBe('open');

    const changes = await sql<{ data: any }>(
      app,
      `select data from domain_events where type = 'conversation.status_changed' and aggregate_id = ? order by seq`,
      [c.id],
    );
    expect(changes.map((e) => `${e.data.from}>${e.data.to}`)).toEqual(['open>snoozed', 'snoozed>resolved', 'resolved>open']);
    const audit = await sql(app, `select 1 from audit_entries where action = 'conversation.updated' and entity_id = ?`, [c.id]);
    // Assign, snooze, resolve: the refused snooze changed nothing and wrote nothing.
    expect(audit).toHaveLength(3);
  });

  test('when a conversation was resolved more than 30 days ago, then a customer message is 409 CONVERSATION_CLOSED', async () => {
    const customer = await createCustomer(app, admin);
    const c = (await start(customer.token, { subject: 'Old', body: 'Old question' })).body;
    await sql(app, `update conversations set status = 'resolved', resolved_at = now() - interval '31 days' where id = ?`, [c.id]);
    const res = await app.request('POST', `/customers/me/conversations/${c.id}/messages`, {
      token: customer.token,
      body: { body: 'Again' },
    });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('CONVERSATION_CLOSED');
  });

  test('when staff start a conversation, then it waits for the customer, who sees it; without the permissions staff get 403', async () => {
    const customer = await createCustomer(app, admin);
    const res = await app.request('POST', `/api/crm/customers/${customer.id}/conversations`, {
      token: admin,
      body: { subject: 'Your documents', body: 'Please upload a proof of address', category: 'verification' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'pending', started_by: 'staff' });
    const list = await app.request('GET', '/customers/me/conversations', { token: customer.token });
    expect(list.body.items.map((c: any) => c.id)).toEqual([res.body.id]);

    const missing = await app.request('POST', `/api/crm/customers/00000000-0000-4000-8000-000000000000/conversations`, {
      token: admin,
      body: { subject: 'x', body: 'y' },
    });
    expect(missing.status).toBe(404);

    const viewer = await createStaff(app, ['view_customers'], admin);
    expect((await app.request('GET', '/api/crm/conversations', { token: viewer.token })).status).toBe(403);
    const reader = await createStaff(app, ['view_conversations'], admin);
    expect((await app.request('GET', `/api/crm/conversations/${res.body.id}`, { token: reader.token })).status).toBe(200);
    const write = await app.request('POST', `/api/crm/conversations/${res.body.id}/messages`, {
      token: reader.token,
      body: { body: 'x' },
    });
    expect(write.status).toBe(403);
  });

  test('when conversation messages exist, then the CRM timeline lists them', async () => {
    const customer = await createCustomer(app, admin);
    await start(customer.token, { subject: 'Timeline', body: 'On the timeline' });
    await waitFor('the timeline message', async () => {
      const res = await app.request('GET', `/api/crm/customers/${customer.id}/timeline?types=message`, { token: admin });
      return res.body.items?.some((i: any) => i.kind === 'message' && i.summary === 'On the timeline');
    });
  });
});

describe('attachments', () => {
  test('when a message names an attachment that is not the caller’s, then 422 at attachment_ids and nothing is kept', async () => {
    const customer = await createCustomer(app, admin);
    const c = (await start(customer.token, { subject: 'File', body: 'See attached' })).body;
    const res = await app.request('POST', `/customers/me/conversations/${c.id}/messages`, {
      token: customer.token,
      body: { body: 'here', attachment_ids: ['00000000-0000-4000-8000-000000000000'] },
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).toContain('attachment_ids');
    expect(await sql(app, 'select 1 from conversation_messages where conversation_id = ?', [c.id])).toHaveLength(1);
  });
});
