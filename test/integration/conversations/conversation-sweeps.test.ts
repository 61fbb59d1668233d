import type { EntityManager } from '@mikro-orm/postgresql';
import { reportSlaBreaches } from '../../../src/domain/conversations/conversation-sweeps';
import { adminToken, createCustomer } from '../../helpers/identity';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';

jest.setTimeout(180_000);

let app: TestApp;
let admin: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'convsweeps' });
  admin = await adminToken(app);
});
afterAll(async () => {
  await app?.stop();
});

async function statusOf(id: string): Promise<string | undefined> {
  return (await sql<{ status: string }>(app, 'select status from conversations where id = ?', [id]))[0]?.status;
}

async function eventsOf(id: string, type: string): Promise<number> {
  return (await sql(app, 'select 1 from domain_events where aggregate_id = ? and type = ?', [id, type])).length;
}

test('when a pending conversation is a week quiet, a snooze ends and a first response is late, then the scheduled workers resolve, reopen and report it once', async () => {
  const customer = await createCustomer(app, admin);
  const start = async (subject: string) =>
    (await app.request('POST', '/customers/me/conversations', { token: customer.token, body: { subject, body: subject } })).body
      .id as string;
  const stale = await start('stale');
  const fresh = await start('fresh');
  const snoozed = await start('snoozed');
  const late = await start('late');
  const answered = await start('answered');

  for (const id of [stale, fresh]) {
    const res = await app.request('PATCH', `/api/crm/conversations/${id}`, { token: admin, body: { status: 'pending' } });
    expect(res.status).toBe(200);
  }
  await sql(app, `update conversations set status_changed_at = now() - interval '7 days 1 minute' where id = ?`, [stale]);
  await sql(app, `update conversations set status_changed_at = now() - interval '6 days' where id = ?`, [fresh]);
  const snooze = await app.request('PATCH', `/api/crm/conversations/${snoozed}`, {
    token: admin,
    body: { snoozed_until: new Date(Date.now() + 2000).toISOString() },
  });
  expect(snooze.body.status).toBe('snoozed');
  await app.request('POST', `/api/crm/conversations/${answered}/messages`, { token: admin, body: { body: 'Answered' } });
  // An internal note is no answer: the late conversation stays due.
  await app.request('POST', `/api/crm/conversations/${late}/messages`, { token: admin, body: { body: 'note', internal: true } });
  await sql(app, `update conversations set first_response_due_at = now() - interval '1 minute' where id in (?, ?, ?)`, [
    late,
    answered,
    stale,
  ]);

  await waitFor('the stale pending conversation to be resolved', async () => (await statusOf(stale)) === 'resolved', 60_000);
  await waitFor('the snoozed conversation to wake', async () => (await statusOf(snoozed)) === 'open', 40_000);
  await waitFor(
    'the late first response to be reported',
    async () => (await eventsOf(late, 'conversation.sla_breached')) === 1,
    40_000,
  );

  expect(await statusOf(fresh)).toBe('pending');
  expect(await eventsOf(answered, 'conversation.sla_breached')).toBe(0);
  // Another sweep finds nothing left to report: the breach is reported once.
  expect(await reportSlaBreaches(app.runtime.services.orm.em.fork() as EntityManager)).toBe(0);
  expect(await eventsOf(late, 'conversation.sla_breached')).toBe(1);
  const resolved = await sql<{ data: any }>(
    app,
    `select data from domain_events where aggregate_id = ? and type = 'conversation.status_changed' order by seq`,
    [stale],
  );
  expect(resolved.map((e) => `${e.data.from}>${e.data.to}`)).toEqual(['open>pending', 'pending>resolved']);
});
