import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordEvent } from '../../../src/domain/events/outbox';
import type { EventType } from '../../../src/domain/events/event-types';
import { adminToken, createCustomer, loginCustomer, type LoggedIn } from '../../helpers/identity';
import { decodedMessage } from '../../helpers/mail';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { walletOf } from '../money/money-kit';

jest.setTimeout(60_000);

let smtp: SmtpSink;
let app: TestApp;
let second: TestApp;
let admin: string;

beforeAll(async () => {
  smtp = await startSmtpSink();
  // Two instances of one deployment, each with API and workers: two notification workers.
  app = await startTestApp({ label: 'notifications', env: { SMTP_URL: smtp.url, OUTBOX_RELAY_INTERVAL_MS: '200' } });
  second = await startTestApp({ shareWith: app, env: { SMTP_URL: smtp.url, OUTBOX_RELAY_INTERVAL_MS: '200' } });
  admin = await adminToken(app);
});
afterAll(async () => {
  await second?.stop();
  await app?.stop();
  await smtp?.close();
});

const list = (c: LoggedIn, query = '') => app.request('GET', `/customers/me/notifications${query}`, { token: c.token });

async function notificationsOf(c: LoggedIn, count: number) {
  return waitFor(`${count} notifications`, async () => {
    const res = await list(c, '?page_size=50');
    return res.body.items?.length >= count ? res.body : undefined;
  });
}

async function germanCustomer(): Promise<LoggedIn> {
  const email = `kunde-${randomUUID().slice(0, 8)}@broker.test`;
  const password = 'Harbour-violet-candle-41';
  const created = await app.request('POST', '/api/crm/customers', {
    token: admin,
    body: { email, password, first_name: 'Greta', last_name: 'Berg', locale: 'de-AT' },
  });
  const pair = await loginCustomer(app, email, password);
  return { id: created.body.id, email, password, token: pair.access_token, refreshToken: pair.refresh_token };
}

/**
 * Waits until every event about the customer is published and handled by the notifications
 * consumer: a notification is written in the transaction that handles its event, so none can
 * come after this, and a check for duplicates or extras is no longer early.
 */
async function notificationsSettled(customerId: string): Promise<void> {
  await waitFor('every event of the customer handled by the notifications consumer', async () => {
    const [row] = await sql<{ unpublished: number; unhandled: number }>(
      app,
      `select count(*) filter (where e.published_at is null)::int as unpublished,
              count(*) filter (where i.consumer = 'notifications' and i.processed_at is null)::int as unhandled
         from domain_events e left join event_inbox i on i.event_id = e.id where e.customer_id = ?`,
      [customerId],
    );
    return row!.unpublished === 0 && row!.unhandled === 0;
  });
}

/** Events as their writers (some in later issues) record them. */
async function writeEvents(customerId: string, events: Array<{ type: EventType; data: Record<string, unknown> }>) {
  const em = app.runtime.services.orm.em.fork() as EntityManager;
  for (const e of events)
    recordEvent(em, { type: e.type, aggregateType: 'test', aggregateId: randomUUID(), customerId, data: e.data });
  await em.flush();
}

test('when a withdrawal is requested and approved, then the customer gets both, newest first, in German as the mails are', async () => {
  const customer = await germanCustomer();
  const wallet = await walletOf(app, customer);
  await app.request('POST', `/api/backoffice/accounts/${wallet}/deposits`, { token: admin, body: { amount: 500 } });
  const requested = await app.request('POST', '/customers/me/withdraw', {
    token: customer.token,
    body: { amount: 120.5, payment_data: { iban: 'DE02120300000000202051' } },
  });
  expect(requested.status).toBe(202);
  const id = requested.body.transaction_id;
  expect((await app.request('POST', `/api/backoffice/withdrawals/${id}/approve`, { token: admin })).status).toBe(200);

  const page = await notificationsOf(customer, 2);
  expect(page).toMatchObject({ unread_count: 2, page: 1, page_size: 50, total: 2 });
  expect(page.items.map((n: { type: string }) => n.type)).toEqual(['withdrawal.approved', 'withdrawal.requested']);
  // The customer's locale is de-AT: the notifications speak German, like the mails.
  expect(page.items[1]).toMatchObject({ title: 'Auszahlung beantragt' });
  expect(page.items[0]).toMatchObject({
    title: 'Auszahlung genehmigt',
    is_read: false,
    data: { id, amount: '120.50', currency: 'USD', status: 'completed' },
  });
  expect(page.items[0].body).toBe(`Ihre Auszahlung von 120.50 USD aus Ihrer Wallet ${wallet} ist genehmigt.`);
  expect(JSON.stringify(page)).not.toContain('DE02120300000000202051');

  const mails = await waitFor('two mails', async () => {
    const m = smtp.received.filter((r) => r.to.includes(customer.email));
    return m.length >= 2 ? m.map((r) => decodedMessage(r.raw)) : undefined;
  });
  expect(mails.some((m) => m.includes('Hallo Greta') && m.includes('Auftrag erhalten'))).toBe(true);
  expect(mails.some((m) => m.includes('ist genehmigt und unterwegs'))).toBe(true);
});

test('when events of other kinds arrive, then only those that concern the customer and say something new notify', async () => {
  const customer = await createCustomer(app, admin);
  await writeEvents(customer.id, [
    {
      type: 'order.closed',
      data: { order: 7, login: 100001, symbol: 'EURUSD', close_price: 1.1, profit: '5.00', close_reason: 'manual' },
    },
    {
      type: 'order.closed',
      data: { order: 8, login: 100001, symbol: 'EURUSD', close_price: 1.1, profit: '-3.00', close_reason: 'bulk_close' },
    },
    {
      type: 'order.closed',
      data: { order: 9, login: 100001, symbol: 'GBPUSD', close_price: 1.2, profit: '-9.00', close_reason: 'stop_out' },
    },
    { type: 'order.opened', data: { order: 10 } },
    {
      type: 'transfer.completed',
      data: { amount: 10, from_currency: 'USD', from_login: '1', to_login: '2', converted_amount: 9, to_currency: 'EUR' },
    },
    { type: 'payout.approved', data: { id: randomUUID(), amount: '250.00', currency: 'USD', login: 200001 } },
    {
      type: 'payout.rejected',
      data: { id: randomUUID(), amount: '80.00', currency: 'USD', login: 200001, reason: 'Rules broken' },
    },
  ]);
  const page = await notificationsOf(customer, 5);
  await notificationsSettled(customer.id);
  const all = (await list(customer, '?page_size=50')).body;
  expect(all.items.map((n: { type: string }) => n.type).sort()).toEqual([
    'order.closed',
    'order.closed',
    'payout.approved',
    'payout.rejected',
    'transfer.completed',
  ]);
  expect(
    all.items
      .filter((n: { type: string }) => n.type === 'order.closed')
      .map((n: { data: { order: number } }) => n.data.order)
      .sort(),
  ).toEqual([8, 9]);
  expect(page.unread_count).toBe(5);
  // An English customer reads English.
  expect(all.items.find((n: { type: string }) => n.type === 'payout.approved')).toMatchObject({
    title: 'Payout approved',
    body: 'Your payout of 250.00 USD is approved.',
  });
  await waitFor('the payout mails', async () => smtp.received.filter((r) => r.to.includes(customer.email)).length >= 2);
  const payoutMails = smtp.received.filter((r) => r.to.includes(customer.email)).map((r) => decodedMessage(r.raw));
  expect(payoutMails.some((m) => m.includes('was rejected: Rules broken'))).toBe(true);
});

test('when an event carries more than the customer may see, then the notification shows only what its type lists', async () => {
  const customer = await createCustomer(app, admin);
  const staffUser = randomUUID();
  const group = randomUUID();
  await writeEvents(customer.id, [
    {
      type: 'payout.approved',
      data: { id: randomUUID(), login: 200001, amount: '250.00', currency: 'USD', status: 'approved', decided_by: staffUser },
    },
    {
      type: 'account.margin_call',
      data: {
        login: 100001,
        kind: 'live',
        currency: 'USD',
        balance: '100.00',
        equity: '40.00',
        margin: '50.00',
        free_margin: '-10.00',
        group_id: group,
        leverage: 100,
        customer_id: customer.id,
        created_at: new Date().toISOString(),
        margin_level: '80.00',
        margin_call_level: 100,
      },
    },
  ]);
  const { items } = await notificationsOf(customer, 2);
  const byType = Object.fromEntries(items.map((n: { type: string; data: unknown }) => [n.type, n.data]));
  expect(Object.keys(byType['payout.approved']).sort()).toEqual(['amount', 'currency', 'id', 'login', 'status']);
  expect(byType['account.margin_call']).toEqual({
    login: 100001,
    currency: 'USD',
    balance: '100.00',
    equity: '40.00',
    margin: '50.00',
    free_margin: '-10.00',
    margin_level: '80.00',
    margin_call_level: 100,
  });
  for (const hidden of [staffUser, group, customer.id]) expect(JSON.stringify(items)).not.toContain(hidden);
});

test('when the list is paged, then page and page_size are bounded (422 at the parameter) and pages do not overlap', async () => {
  const customer = await createCustomer(app, admin);
  await writeEvents(
    customer.id,
    Array.from({ length: 5 }, (_, i) => ({
      type: 'payout.approved' as const,
      data: { id: String(i), amount: `${i}.00`, currency: 'USD', login: 1 },
    })),
  );
  await notificationsOf(customer, 5);
  const p1 = (await list(customer, '?page=1&page_size=2')).body;
  const p3 = (await list(customer, '?page=3&page_size=2')).body;
  expect(p1).toMatchObject({ page: 1, page_size: 2, total: 5, unread_count: 5 });
  expect(p1.items).toHaveLength(2);
  expect(p3.items).toHaveLength(1);
  const stamps = [...p1.items, ...(await list(customer, '?page=2&page_size=2')).body.items, ...p3.items].map(
    (n: { created_at: string }) => n.created_at,
  );
  expect(stamps).toEqual([...stamps].sort().reverse());
  expect(new Set([...p1.items, ...p3.items].map((n: { id: string }) => n.id)).size).toBe(3);
  expect((await list(customer)).body).toMatchObject({ page: 1, page_size: 20 });

  for (const [query, param] of [
    ['?page=0', 'page'],
    ['?page_size=51', 'page_size'],
    ['?page_size=0', 'page_size'],
    ['?page=abc', 'page'],
  ] as const) {
    const res = await list(customer, query);
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['query', param]);
  }
});

test('when notifications are read one by one or all at once, then unread_count follows, and another customer’s is 404', async () => {
  const customer = await createCustomer(app, admin);
  const stranger = await createCustomer(app, admin);
  await writeEvents(
    customer.id,
    Array.from({ length: 3 }, (_, i) => ({
      type: 'payout.approved' as const,
      data: { id: String(i), amount: '1.00', currency: 'USD', login: 1 },
    })),
  );
  const { items } = await notificationsOf(customer, 3);
  const read = await app.request('POST', `/customers/me/notifications/${items[1].id}/read`, { token: customer.token });
  expect(read.status).toBe(200);
  expect(read.body).toMatchObject({ id: items[1].id, is_read: true });
  expect((await app.request('POST', `/customers/me/notifications/${items[1].id}/read`, { token: customer.token })).status).toBe(
    200,
  );
  expect((await list(customer)).body.unread_count).toBe(2);

  const theirs = await app.request('POST', `/customers/me/notifications/${items[0].id}/read`, { token: stranger.token });
  expect(theirs.status).toBe(404);
  expect(theirs.body.code).toBe('NOT_FOUND');
  expect((await app.request('POST', `/customers/me/notifications/${randomUUID()}/read`, { token: customer.token })).status).toBe(
    404,
  );
  expect((await list(stranger)).body).toMatchObject({ items: [], unread_count: 0, total: 0 });

  const all = await app.request('POST', '/customers/me/notifications/read-all', { token: customer.token });
  expect(all.body).toEqual({ marked: 2, unread_count: 0 });
  expect((await list(customer)).body.items.every((n: { is_read: boolean }) => n.is_read)).toBe(true);
  expect((await app.request('GET', '/customers/me/notifications', { token: admin })).status).toBe(403);
});

test('when many events are worked through by two workers at once, then each notifies exactly once', async () => {
  const customer = await createCustomer(app, admin);
  const n = 300;
  await writeEvents(
    customer.id,
    Array.from({ length: n }, (_, i) => ({
      type: 'transfer.completed' as const,
      data: { amount: i, from_login: '1', to_login: '2' },
    })),
  );
  await waitFor(
    'every event to notify',
    async () => {
      const [row] = await sql<{ n: number }>(app, 'select count(*)::int as n from notifications where customer_id = ?', [
        customer.id,
      ]);
      return row!.n >= n;
    },
    30_000,
  );
  await notificationsSettled(customer.id);
  const [counts] = await sql<{ rows: number; events: number }>(
    app,
    'select count(*)::int as rows, count(distinct event_id)::int as events from notifications where customer_id = ?',
    [customer.id],
  );
  expect(counts).toEqual({ rows: n, events: n });
  const [pending] = await sql<{ n: number }>(
    app,
    `select count(*)::int as n from event_inbox where consumer = 'notifications' and processed_at is null`,
  );
  expect(pending!.n).toBe(0);
});
