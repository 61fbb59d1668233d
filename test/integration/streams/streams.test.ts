import { Client } from 'pg';
import { startTestApp, sql, type TestApp } from '../../helpers/test-app';
import { adminToken, createCustomer, createStaff, loginCustomer, type LoggedIn } from '../../helpers/identity';
import { fundedAccount, openOrder, setQuote, setUpMarket } from '../../helpers/trading';
import { openSse, type SseClient } from '../../helpers/sse-client';

jest.setTimeout(90_000);

let app: TestApp;
let admin: string;
let groupId: string;
let alice: LoggedIn;
let bob: LoggedIn;
let aliceLogin: number;
let bobLogin: number;
const open: SseClient[] = [];

async function stream(path: string, token?: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const client = await openSse(`${app.baseUrl}${path}`, { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers });
  open.push(client);
  return client;
}

beforeAll(async () => {
  app = await startTestApp({ label: 'streams', env: { OUTBOX_RELAY_INTERVAL_MS: '100' } });
  admin = await adminToken(app);
  groupId = (await setUpMarket(app, admin)).groupId;
  alice = await createCustomer(app, admin);
  bob = await createCustomer(app, admin);
  aliceLogin = await fundedAccount(app, admin, alice.id, groupId);
  bobLogin = await fundedAccount(app, admin, bob.id, groupId);
});

afterEach(() => {
  for (const c of open.splice(0)) c.close();
});

afterAll(async () => {
  await app?.stop();
});

const isOrderOpened = (order: number) => (e: { event: string; data: string }) =>
  e.event === 'order.opened' && (JSON.parse(e.data) as { data: { order: number } }).data.order === order;

test('when two customers stream their own events, then each sees its own orders and never the other one’s', async () => {
  const a = await stream('/customers/me/stream', alice.token);
  const b = await stream('/customers/me/stream', bob.token);
  expect(a.status).toBe(200);
  expect(a.headers['content-type']).toMatch(/^text\/event-stream/);
  const aliceOrder = await openOrder(app, admin, aliceLogin);
  const bobOrder = await openOrder(app, admin, bobLogin);
  const seen = await a.waitFor(isOrderOpened(aliceOrder));
  await b.waitFor(isOrderOpened(bobOrder));
  expect(seen.id).toMatch(/^\d+$/);
  const body = JSON.parse(seen.data);
  expect(Object.keys(body).sort()).toEqual(['created_at', 'data', 'id', 'sequence', 'type']);
  expect(String(body.sequence)).toBe(seen.id);
  expect(body.type).toBe('order.opened');
  // A stream gets events in publication order: once each has seen a later order of its own,
  // a leaked earlier one would already be there.
  const aliceMark = await openOrder(app, admin, aliceLogin);
  const bobMark = await openOrder(app, admin, bobLogin);
  await a.waitFor(isOrderOpened(aliceMark));
  await b.waitFor(isOrderOpened(bobMark));
  expect(a.events.some(isOrderOpened(bobOrder))).toBe(false);
  expect(b.events.some(isOrderOpened(aliceOrder))).toBe(false);
  const [row] = await sql<{ seq: string }>(app, 'select seq::text from domain_events where id = ?', [body.id]);
  expect(seen.id).toBe(row!.seq);
});

test('when the back office streams some types, then it gets those of every customer and nothing else; access is checked', async () => {
  const all = await stream('/api/backoffice/stream', admin);
  const closedOnly = await stream('/api/backoffice/stream?types=order.closed', admin);
  const order = await openOrder(app, admin, bobLogin);
  await all.waitFor(isOrderOpened(order));
  // The order's close comes after its opening: once the filtered stream has it, an unfiltered
  // opening would already be there.
  const closed = await app.request('POST', `/orders/${order}/close`, { token: admin });
  expect(closed.status).toBe(200);
  await closedOnly.waitFor((e) => e.event === 'order.closed' && JSON.parse(e.data).data.order === order);
  expect(closedOnly.events.filter((e) => e.event === 'order.opened')).toEqual([]);

  expect((await stream('/api/backoffice/stream', alice.token)).status).toBe(403);
  const viewer = await createStaff(app, ['view_groups'], admin);
  expect((await stream('/api/backoffice/stream', viewer.token)).status).toBe(403);
  expect((await stream('/api/backoffice/stream?types=nope', admin)).status).toBe(422);
  expect((await stream('/customers/me/stream', admin)).status).toBe(403);
  expect((await stream('/customers/me/stream')).status).toBe(401);
});

test('when a stream ticket is used, then it opens one stream once and never again', async () => {
  const res = await app.request('POST', '/auth/stream-tickets', { token: alice.token });
  expect(res.status).toBe(201);
  expect(res.body.expires_in).toBe(30);
  const first = await stream(`/customers/me/stream?ticket=${res.body.ticket}`);
  expect(first.status).toBe(200);
  const again = await stream(`/customers/me/stream?ticket=${res.body.ticket}`);
  expect(again.status).toBe(401);
  expect((await stream('/customers/me/stream?ticket=st_forged')).status).toBe(401);
});

test('when a session opens a sixth stream, then it is refused with 429 until one closes', async () => {
  const five = [];
  for (let i = 0; i < 5; i++) five.push(await stream('/streams/quotes?symbols=EURUSD', bob.token));
  expect(five.map((c) => c.status)).toEqual([200, 200, 200, 200, 200]);
  const sixth = await stream('/streams/quotes', bob.token);
  expect(sixth.status).toBe(429);
  expect(sixth.headers['retry-after']).toBeDefined();
  five[0]!.close();
  await new Promise((r) => setTimeout(r, 300));
  expect((await stream('/streams/quotes', bob.token)).status).toBe(200);
});

test('when one customer logs in three times, then its sessions hold 10 streams together and the eleventh is 429 TOO_MANY_STREAMS', async () => {
  const carol = await createCustomer(app, admin);
  const again = await loginCustomer(app, carol.email, carol.password);
  const third = await loginCustomer(app, carol.email, carol.password);
  const held = [];
  for (const token of [carol.token, carol.token, carol.token, carol.token, carol.token])
    held.push(await stream('/streams/quotes?symbols=EURUSD', token));
  for (let i = 0; i < 5; i++) held.push(await stream('/customers/me/stream', again.access_token));
  expect(held.map((c) => c.status)).toEqual(Array(10).fill(200));
  // The third session holds nothing, yet the customer holds ten.
  const eleventh = await stream('/streams/quotes', third.access_token);
  expect(eleventh.status).toBe(429);
  await eleventh.ended;
  expect(JSON.parse(eleventh.text())).toMatchObject({ code: 'TOO_MANY_STREAMS' });
  expect(eleventh.headers['retry-after']).toBeDefined();
  // Another principal is not held back by it.
  expect((await stream('/streams/quotes', alice.token)).status).toBe(200);
  held[0]!.close();
  await new Promise((r) => setTimeout(r, 300));
  expect((await stream('/streams/quotes', third.access_token)).status).toBe(200);
});

test('when a quote changes, then a quote stream gets the current quote, then the newest one', async () => {
  const q = await stream('/streams/quotes?symbols=EURUSD', alice.token);
  const first = await q.waitFor((e) => e.event === 'quote');
  expect(Object.keys(JSON.parse(first.data)).sort()).toEqual(['ask', 'bid', 'symbol', 'time']);
  await setQuote(app, admin, 'EURUSD', 1.2, 1.2002);
  await q.waitFor((e) => e.event === 'quote' && JSON.parse(e.data).bid === 1.2);
  await setQuote(app, admin, 'USDJPY', 151, 151.02);
  // Quotes reach a stream in the order they were set: once the later EURUSD quote is there, a
  // USDJPY one would be too.
  await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
  await q.waitFor((e) => e.event === 'quote' && JSON.parse(e.data).bid === 1.1);
  expect(q.events.every((e) => JSON.parse(e.data).symbol === 'EURUSD')).toBe(true);
});

test('when a session is revoked, then its streams end within a second', async () => {
  const carol = await createCustomer(app, admin);
  const s = await stream('/customers/me/stream', carol.token);
  const sessions = await app.request('GET', '/auth/sessions', { token: carol.token });
  const current = sessions.body.items.find((x: { current: boolean }) => x.current);
  const started = Date.now();
  expect((await app.request('DELETE', `/auth/sessions/${current.id}`, { token: carol.token })).status).toBe(204);
  await s.ended;
  expect(Date.now() - started).toBeLessThan(1000);
});

test('when a client reconnects with Last-Event-ID while events keep coming, then it gets every event once, in order', async () => {
  const first = await stream('/customers/me/stream', alice.token);
  const before = await openOrder(app, admin, aliceLogin);
  const seen = await first.waitFor(isOrderOpened(before));
  first.close();
  // Orders race the reconnect: some commit before it, some during the replay, some after.
  const racing = (async () => {
    const orders: number[] = [];
    for (let i = 0; i < 8; i++) orders.push(await openOrder(app, admin, aliceLogin));
    return orders;
  })();
  await new Promise((r) => setTimeout(r, 150));
  const second = await stream('/customers/me/stream', alice.token, { 'last-event-id': seen.id! });
  const orders = await racing;
  await second.waitFor(isOrderOpened(orders[orders.length - 1]!), 10_000);
  const ids = second.events.filter((e) => e.id).map((e) => e.id!);
  const expected = await sql<{ s: string }>(
    app,
    `select seq::text as s from domain_events
      where customer_id = ? and publication_seq > (select publication_seq from domain_events where seq = ?)
      order by publication_seq`,
    [alice.id, seen.id],
  );
  expect(ids).toEqual(expected.map((r) => r.s));
  for (const o of orders) expect(second.events.filter(isOrderOpened(o))).toHaveLength(1);
});

test('when an event commits after a later-numbered one while the client is away, then the resume still brings it', async () => {
  const db = new Client({ connectionString: app.config.databaseUrl });
  await db.connect();
  try {
    const insert = (tag: string) =>
      db.query(
        `insert into domain_events (id, created_at, updated_at, type, aggregate_type, aggregate_id, data)
         values (gen_random_uuid(), now(), now(), 'group.updated', 'group', $1, '{}') returning seq::text as seq`,
        [tag],
      );
    const s = await stream('/api/backoffice/stream?types=group.updated', admin);
    // The earlier-numbered event's transaction stays open while a later one commits and is seen.
    await db.query('begin');
    const early = (await insert('late-commit')).rows[0].seq as string;
    const [later] = await sql<{ seq: string }>(
      app,
      `insert into domain_events (id, created_at, updated_at, type, aggregate_type, aggregate_id, data)
       values (gen_random_uuid(), now(), now(), 'group.updated', 'group', 'early-commit', '{}') returning seq::text as seq`,
    );
    expect(BigInt(later!.seq)).toBeGreaterThan(BigInt(early));
    const seen = await s.waitFor((e) => e.id === later!.seq);
    s.close();
    await db.query('commit');
    await waitForPublished(early);
    const again = await stream('/api/backoffice/stream?types=group.updated', admin, { 'last-event-id': seen.id! });
    await again.waitFor((e) => e.id === early, 10_000);
    expect(again.events.filter((e) => e.id === later!.seq)).toHaveLength(0);
  } finally {
    await db.end();
  }
});

async function waitForPublished(seq: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const [row] = await sql<{ p: string | null }>(app, 'select publication_seq::text as p from domain_events where seq = ?', [
      seq,
    ]);
    if (row?.p) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`event ${seq} was not handed over`);
}

test('when Last-Event-ID is older than the replay window, then the first event is reset', async () => {
  const [oldest] = await sql<{ seq: string }>(app, 'select min(seq)::text as seq from domain_events');
  await sql(app, `update domain_events set created_at = now() - interval '25 hours' where seq = ?`, [oldest!.seq]);
  const s = await stream('/customers/me/stream', alice.token, { 'last-event-id': String(BigInt(oldest!.seq) - 1n) });
  const first = await s.waitFor(() => true);
  expect(first.event).toBe('reset');
  expect(first.id).toBeUndefined();
});

test('when a customer’s position moves with quotes, then account.updated comes at most once per account per 250 ms', async () => {
  const dave = await createCustomer(app, admin);
  const login = await fundedAccount(app, admin, dave.id, groupId);
  const s = await stream('/customers/me/stream', dave.token);
  await new Promise((r) => setTimeout(r, 400));
  await openOrder(app, admin, login, 0, 1);
  const opened = await s.waitFor((e) => e.event === 'account.updated' && Number(JSON.parse(e.data).margin) > 0);
  const figures = JSON.parse(opened.data);
  expect(Object.keys(figures).sort()).toEqual(['balance', 'credit', 'equity', 'free_margin', 'login', 'margin']);
  expect(figures.login).toBe(login);
  // The same view, with the same JSON types, as the REST account: money as decimal text.
  for (const key of ['balance', 'equity', 'margin', 'free_margin'])
    expect([key, figures[key]]).toEqual([key, expect.stringMatching(/^-?\d+\.\d\d$/)]);
  const rest = (await app.request('GET', '/customers/me/accounts', { token: dave.token })).body.items.find(
    (a: { login: number }) => a.login === login,
  );
  expect([figures.balance, figures.margin]).toEqual([rest.balance, rest.margin]);
  const before = s.events.filter((e) => e.event === 'account.updated').length;
  const started = Date.now();
  for (let i = 1; i <= 20; i++)
    await setQuote(app, admin, 'EURUSD', Number((1.1 + i / 10_000).toFixed(5)), Number((1.1002 + i / 10_000).toFixed(5)));
  const elapsed = Date.now() - started;
  await s.waitFor((e) => e.event === 'account.updated' && Number(JSON.parse(e.data).equity) > Number(figures.equity));
  await new Promise((r) => setTimeout(r, 300));
  const updates = s.events.filter((e) => e.event === 'account.updated').length - before;
  expect(updates).toBeGreaterThanOrEqual(1);
  expect(updates).toBeLessThanOrEqual(Math.ceil((elapsed + 600) / 250) + 1);
  await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
});

test('when a staff user is deactivated, then its back-office streams end within a second', async () => {
  const watcher = await createStaff(app, ['view_events'], admin);
  const s = await stream('/api/backoffice/stream', watcher.token);
  expect(s.status).toBe(200);
  const started = Date.now();
  expect(
    (await app.request('PATCH', `/api/admin/users/${watcher.id}`, { token: admin, body: { is_active: false } })).status,
  ).toBe(200);
  await s.ended;
  expect(Date.now() - started).toBeLessThan(1000);
});
