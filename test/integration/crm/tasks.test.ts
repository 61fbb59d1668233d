import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { walletOf } from '../money/money-kit';
import { TaskAlertsJob } from '../../../src/jobs/task-alerts.job';

/**
 * Tasks: creation with assignee checks, the state machine, lists within scope, the overdue
 * and reminder sweep (once each, with the task_reminder mail) and task rules (one task per
 * rule and event).
 */
jest.setTimeout(120_000);

let app: TestApp;
let admin: string;
let east: string;
let west: string;
let eastC: LoggedIn;
let westC: LoggedIn;
let agent: LoggedIn;

function ok<T = any>(res: { status: number; body: T; text: string }, status: number): T {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status} ${res.text}`);
  return res.body;
}

const inAnHour = () => new Date(Date.now() + 3600_000).toISOString();
const task = (token: string, body: Record<string, unknown>) =>
  app.request('POST', '/api/crm/tasks', {
    token,
    body: { title: 'Call back', kind: 'call', priority: 'normal', due_at: inAnHour(), ...body },
  });

beforeAll(async () => {
  app = await startTestApp({ label: 'crmtasks', env: { OUTBOX_RELAY_INTERVAL_MS: '100' } });
  admin = await adminToken(app);
  east = ok(await app.request('POST', '/api/admin/teams', { token: admin, body: { name: 'East' } }), 201).id;
  west = ok(await app.request('POST', '/api/admin/teams', { token: admin, body: { name: 'West' } }), 201).id;
  eastC = await createCustomer(app, admin);
  westC = await createCustomer(app, admin);
  ok(await app.request('POST', `/api/crm/customers/${eastC.id}/assign`, { token: admin, body: { team_id: east } }), 200);
  ok(await app.request('POST', `/api/crm/customers/${westC.id}/assign`, { token: admin, body: { team_id: west } }), 200);
  agent = await createStaff(app, ['manage_tasks', 'view_customers'], admin);
  ok(await app.request('PUT', `/api/admin/teams/${east}/members/${agent.id}`, { token: admin, body: { role: 'member' } }), 200);
  ok(await app.request('PATCH', `/api/admin/users/${agent.id}`, { token: admin, body: { data_scope: 'team' } }), 200);
});

afterAll(() => app?.stop());

test('when a task is created, then 201 with its fields, task.created is recorded, and it is audited', async () => {
  const created = ok(await task(admin, { customer_id: eastC.id, assignee_id: agent.id, body: 'About the bonus' }), 201);
  expect(created).toEqual(
    expect.objectContaining({
      title: 'Call back',
      status: 'open',
      assignee_id: agent.id,
      customer_id: eastC.id,
      completed_at: null,
      overdue: false,
      rule_id: null,
    }),
  );
  const events = await sql(app, `select 1 from domain_events where type = 'task.created' and aggregate_id = ?`, [created.id]);
  expect(events).toHaveLength(1);
  const audit = await sql(app, `select 1 from audit_entries where action = 'task.created' and entity_id = ?`, [created.id]);
  expect(audit).toHaveLength(1);
});

test('when the assignee is unknown, inactive or cannot see the customer, then 422 at assignee_id', async () => {
  const unknown = await task(admin, { assignee_id: '00000000-0000-4000-8000-000000000000' });
  expect(unknown.status).toBe(422);
  expect(unknown.body.detail[0].loc).toEqual(['body', 'assignee_id']);
  const blind = await task(admin, { customer_id: westC.id, assignee_id: agent.id });
  expect(blind.status).toBe(422);
  expect(blind.body.detail[0].loc).toEqual(['body', 'assignee_id']);
  const gone = await createStaff(app, ['manage_tasks'], admin);
  ok(await app.request('PATCH', `/api/admin/users/${gone.id}`, { token: admin, body: { is_active: false } }), 200);
  expect((await task(admin, { assignee_id: gone.id })).status).toBe(422);
});

test('when a task moves through its states, then allowed moves pass and others are 409 TASK_STATE_CONFLICT', async () => {
  const t = ok(await task(admin, { customer_id: eastC.id, assignee_id: agent.id }), 201);
  const move = (status: string) => app.request('PATCH', `/api/crm/tasks/${t.id}`, { token: agent.token, body: { status } });
  expect(ok(await move('in_progress'), 200).status).toBe('in_progress');
  const done = ok(await move('done'), 200);
  expect(done.completed_by).toBe(agent.id);
  expect(done.completed_at).toEqual(expect.any(String));
  const completed = await sql(app, `select 1 from domain_events where type = 'task.completed' and aggregate_id = ?`, [t.id]);
  expect(completed).toHaveLength(1);
  const conflict = await move('in_progress');
  expect(conflict.status).toBe(409);
  expect(conflict.body.code).toBe('TASK_STATE_CONFLICT');
  const reopened = ok(await move('open'), 200);
  expect(reopened).toEqual(expect.objectContaining({ status: 'open', completed_at: null, completed_by: null }));
  expect(ok(await move('cancelled'), 200).status).toBe('cancelled');
  expect((await move('open')).status).toBe(409);
  // PATCH changes only what is sent.
  const renamed = ok(
    await app.request('PATCH', `/api/crm/tasks/${t.id}`, { token: agent.token, body: { title: 'Renamed' } }),
    200,
  );
  expect(renamed).toEqual(expect.objectContaining({ title: 'Renamed', status: 'cancelled', priority: 'normal' }));
});

test("when the agent reads tasks, then a West customer's task is 404 and lists hold only what it may see", async () => {
  const westTask = ok(await task(admin, { customer_id: westC.id, title: 'West call' }), 201);
  expect((await app.request('GET', `/api/crm/tasks/${westTask.id}`, { token: agent.token })).status).toBe(404);
  expect(
    (await app.request('PATCH', `/api/crm/tasks/${westTask.id}`, { token: agent.token, body: { status: 'done' } })).status,
  ).toBe(404);
  expect((await task(agent.token, { customer_id: westC.id })).status).toBe(404);
  const list = ok(await app.request('GET', '/api/crm/tasks?page_size=200', { token: agent.token }), 200);
  expect(list.items.some((x: { id: string }) => x.id === westTask.id)).toBe(false);
  expect(list.total).toBe(list.items.length);
  const mine = ok(await app.request('GET', '/api/crm/tasks?assignee=me&status=open', { token: agent.token }), 200);
  expect(
    mine.items.every((x: { assignee_id: string; status: string }) => x.assignee_id === agent.id && x.status === 'open'),
  ).toBe(true);
  const byCustomer = ok(await app.request('GET', `/api/crm/tasks?customer_id=${eastC.id}`, { token: agent.token }), 200);
  expect(byCustomer.items.every((x: { customer_id: string }) => x.customer_id === eastC.id)).toBe(true);
});

test('when a task is past due and its reminder time has come, then task.overdue and task.reminder come once each, with mails', async () => {
  const past = new Date(Date.now() - 60_000).toISOString();
  const t = ok(
    await task(admin, { customer_id: eastC.id, assignee_id: agent.id, due_at: past, remind_at: past, title: 'Late' }),
    201,
  );
  const overdueList = ok(await app.request('GET', '/api/crm/tasks?overdue=true', { token: agent.token }), 200);
  expect(overdueList.items.some((x: { id: string; overdue: boolean }) => x.id === t.id && x.overdue)).toBe(true);
  const count = async (type: string) =>
    (await sql(app, `select 1 from domain_events where type = ? and aggregate_id = ?`, [type, t.id])).length;
  await waitFor(
    'the overdue and reminder events',
    async () => ((await count('task.overdue')) && (await count('task.reminder')) ? true : undefined),
    60_000,
  );
  const mails = await sql<{ template: string; to_address: string }>(
    app,
    `select template, to_address from mail_messages where template = 'task_reminder' and to_address = ?`,
    [agent.email],
  );
  expect(mails.length).toBeGreaterThanOrEqual(2);
  // Another sweep, run now and waited for, tells nothing again.
  const sweep = await app.runtime.services.jobs.enqueue(TaskAlertsJob, {});
  await app.runtime.services.queueEvents.waitFor(sweep, 30_000);
  expect(await count('task.overdue')).toBe(1);
  expect(await count('task.reminder')).toBe(1);
});

test('when a task rule matches a deposit, then one task is made for the account manager, once per rule and event', async () => {
  ok(
    await app.request('POST', `/api/crm/customers/${eastC.id}/assign`, { token: admin, body: { account_manager_id: agent.id } }),
    200,
  );
  const rule = ok(
    await app.request('POST', '/api/admin/task-rules', {
      token: admin,
      body: {
        on_event: 'deposit.completed',
        title: 'Welcome call',
        kind: 'call',
        due_in_minutes: 1440,
        assign_to: 'account_manager',
      },
    }),
    201,
  );
  expect((await app.request('POST', '/api/admin/task-rules', { token: admin, body: { ...rule, on_event: 'nope' } })).status).toBe(
    422,
  );
  const wallet = await walletOf(app, eastC);
  ok(await app.request('POST', `/api/backoffice/accounts/${wallet}/deposits`, { token: admin, body: { amount: 100 } }), 201);
  const made = await waitFor(
    'the rule task',
    async () => {
      const rows = await sql<{ id: string; source_event_id: string; assignee_id: string; due_at: Date }>(
        app,
        'select id, source_event_id, assignee_id, due_at from tasks where rule_id = ?',
        [rule.id],
      );
      return rows.length ? rows : undefined;
    },
    30_000,
  );
  expect(made).toHaveLength(1);
  expect(made[0]!.assignee_id).toBe(agent.id);
  // The event handed over again (a redelivery) makes no second task.
  await sql(app, 'update domain_events set published_at = null, publication_seq = null where id = ?', [made[0]!.source_event_id]);
  await waitFor(
    'the event to be handed over again',
    async () => {
      const [row] = await sql<{ published_at: Date | null }>(app, 'select published_at from domain_events where id = ?', [
        made[0]!.source_event_id,
      ]);
      return row?.published_at ? true : undefined;
    },
    30_000,
  );
  const again = await sql(app, 'select 1 from tasks where rule_id = ?', [rule.id]);
  expect(again).toHaveLength(1);
  const created = await sql(app, `select 1 from domain_events where type = 'task.created' and aggregate_id = ?`, [made[0]!.id]);
  expect(created).toHaveLength(1);
});

test('when tasks are listed by due_before, overdue and a named assignee, then exactly the matching tasks come back', async () => {
  const other = await createStaff(app, ['manage_tasks'], admin);
  const past = new Date(Date.now() - 3600_000).toISOString();
  const late = ok(await task(admin, { assignee_id: other.id, due_at: past, title: 'Late' }), 201);
  const soon = ok(await task(admin, { assignee_id: other.id, title: 'Soon' }), 201);
  const lateDone = ok(await task(admin, { assignee_id: other.id, due_at: past, title: 'Late but done' }), 201);
  ok(await app.request('PATCH', `/api/crm/tasks/${lateDone.id}`, { token: admin, body: { status: 'done' } }), 200);
  const ids = async (query: string) =>
    ok(await app.request('GET', `/api/crm/tasks?assignee=${other.id}&${query}`, { token: admin }), 200).items.map(
      (x: { id: string }) => x.id,
    );
  // Soonest due first: the one due in an hour comes last.
  const all = await ids('page_size=50');
  expect(all.at(-1)).toBe(soon.id);
  expect([...all].sort()).toEqual([late.id, lateDone.id, soon.id].sort());
  expect(await ids('overdue=true')).toEqual([late.id]);
  expect((await ids('overdue=false')).sort()).toEqual([lateDone.id, soon.id].sort());
  expect((await ids(`due_before=${encodeURIComponent(new Date().toISOString())}`)).sort()).toEqual([late.id, lateDone.id].sort());
  expect(await ids('status=done')).toEqual([lateDone.id]);
  const late1 = ok(await app.request('GET', `/api/crm/tasks/${late.id}`, { token: admin }), 200);
  expect(late1.overdue).toBe(true);
});

test('when a task names records of its customer as targets, then they are kept as its target rows; another customer’s record is 422', async () => {
  const customer = await createCustomer(app, admin);
  const stranger = await createCustomer(app, admin);
  const ask = async (who: LoggedIn) =>
    ok(
      await app.request('POST', '/customers/me/conversations', { token: who.token, body: { subject: 'Help', body: 'Please' } }),
      201,
    ).id as string;
  const mine = await ask(customer);
  const theirs = await ask(stranger);
  const made = ok(await task(admin, { customer_id: customer.id, targets: [{ type: 'conversation', id: mine }] }), 201);
  expect(made.targets).toEqual([{ type: 'conversation', id: mine }]);
  expect(ok(await app.request('GET', `/api/crm/tasks/${made.id}`, { token: admin }), 200).targets).toEqual([
    { type: 'conversation', id: mine },
  ]);
  const rows = await sql(app, 'select conversation_id from task_targets where task_id = ?', [made.id]);
  expect(rows).toEqual([{ conversation_id: mine }]);
  const foreign = await task(admin, { customer_id: customer.id, targets: [{ type: 'conversation', id: theirs }] });
  expect(foreign.status).toBe(422);
  expect(foreign.body.detail[0].loc).toEqual(['body', 'targets', 0, 'id']);
  const loose = await task(admin, { targets: [{ type: 'conversation', id: mine }] });
  expect(loose.status).toBe(422);
  expect(loose.body.detail[0].loc).toEqual(['body', 'targets']);
  // Refused tasks keep nothing: the customer's conversation is the target of the one task only.
  expect(await sql(app, 'select task_id from task_targets where conversation_id = ?', [mine])).toEqual([{ task_id: made.id }]);
});

test('when a task names an account of its customer by login, then it is a target; another customer’s login or a login as a UUID is 422', async () => {
  const customer = await createCustomer(app, admin);
  const stranger = await createCustomer(app, admin);
  const login = String(await walletOf(app, customer));
  const theirs = String(await walletOf(app, stranger));
  const made = ok(await task(admin, { customer_id: customer.id, targets: [{ type: 'account', id: login }] }), 201);
  expect(made.targets).toEqual([{ type: 'account', id: login }]);
  expect(await sql(app, 'select account_login from task_targets where task_id = ?', [made.id])).toEqual([
    { account_login: login },
  ]);
  for (const target of [
    { type: 'account', id: theirs },
    { type: 'account', id: customer.id },
    { type: 'deposit', id: login },
  ]) {
    const refused = await task(admin, { customer_id: customer.id, targets: [target] });
    expect({ target, status: refused.status, loc: refused.body.detail[0].loc }).toEqual({
      target,
      status: 422,
      loc: ['body', 'targets', 0, 'id'],
    });
  }
});

test('when a team_lead rule fires for a customer of a team without an active lead, then the nearest active lead above gets the task, targeting the event’s record', async () => {
  const parent = ok(
    await app.request('POST', '/api/admin/teams', { token: admin, body: { name: `Region ${Date.now()}` } }),
    201,
  ).id;
  const child = ok(
    await app.request('POST', '/api/admin/teams', { token: admin, body: { name: `Desk ${Date.now()}`, parent_team_id: parent } }),
    201,
  ).id;
  const boss = await createStaff(app, ['manage_tasks'], admin);
  const gone = await createStaff(app, ['manage_tasks'], admin);
  ok(await app.request('PUT', `/api/admin/teams/${parent}/members/${boss.id}`, { token: admin, body: { role: 'lead' } }), 200);
  ok(await app.request('PUT', `/api/admin/teams/${child}/members/${gone.id}`, { token: admin, body: { role: 'lead' } }), 200);
  ok(await app.request('PATCH', `/api/admin/users/${gone.id}`, { token: admin, body: { is_active: false } }), 200);
  const customer = await createCustomer(app, admin);
  ok(await app.request('POST', `/api/crm/customers/${customer.id}/assign`, { token: admin, body: { team_id: child } }), 200);
  const rule = ok(
    await app.request('POST', '/api/admin/task-rules', {
      token: admin,
      body: {
        on_event: 'conversation.created',
        title: 'Answer the new question',
        kind: 'follow_up',
        due_in_minutes: 60,
        assign_to: 'team_lead',
      },
    }),
    201,
  );
  const conversation = ok(
    await app.request('POST', '/customers/me/conversations', {
      token: customer.token,
      body: { subject: 'Hi', body: 'A question' },
    }),
    201,
  ).id;
  const made = await waitFor(
    'the rule task',
    async () => {
      const [row] = await sql<{ id: string; assignee_id: string | null }>(
        app,
        'select id, assignee_id from tasks where rule_id = ? and customer_id = ?',
        [rule.id, customer.id],
      );
      return row;
    },
    30_000,
  );
  expect(made.assignee_id).toBe(boss.id);
  const view = ok(await app.request('GET', `/api/crm/tasks/${made.id}`, { token: admin }), 200);
  expect(view).toMatchObject({ rule_id: rule.id, targets: [{ type: 'conversation', id: conversation }] });
  const [event] = await sql<{ data: { targets: unknown } }>(
    app,
    `select data from domain_events where type = 'task.created' and aggregate_id = ?`,
    [made.id],
  );
  expect(event!.data.targets).toEqual([{ type: 'conversation', id: conversation }]);
});
