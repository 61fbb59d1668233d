import { readFileSync } from 'node:fs';
import { spawnWorkerOf, type ServiceProcess } from '../../helpers/service-process';
import { startTestApp, sql, waitFor, type TestApp } from '../../helpers/test-app';
import { adminToken, createCustomer, type LoggedIn } from '../../helpers/identity';
import { fundedAccount, openOrder, setUpMarket } from '../../helpers/trading';
import { openSse, type SseClient } from '../../helpers/sse-client';

jest.setTimeout(180_000);

/** Process A: this test's in-process app (it also runs the relay); process B: a second API process of the same deployment. */
let app: TestApp;
let other: ServiceProcess;
let otherUrl: string;
let admin: string;
let alice: LoggedIn;
let aliceLogin: number;
const open: SseClient[] = [];

async function stream(base: string, path: string, token: string): Promise<SseClient> {
  const client = await openSse(`${base}${path}`, { authorization: `Bearer ${token}` });
  open.push(client);
  return client;
}

function rssKb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Number(/\d+/.exec(line)![0]);
}

beforeAll(async () => {
  app = await startTestApp({ label: 'streams-processes', env: { OUTBOX_RELAY_INTERVAL_MS: '100' } });
  other = spawnWorkerOf(app, { ROLE: 'api', PORT: '0', LOG_LEVEL: 'info' });
  const listening = await other.waitForLog('api listening');
  otherUrl = `http://127.0.0.1:${listening.port as number}`;
  admin = await adminToken(app);
  const { groupId } = await setUpMarket(app, admin);
  alice = await createCustomer(app, admin);
  aliceLogin = await fundedAccount(app, admin, alice.id, groupId);
});

afterEach(() => {
  for (const c of open.splice(0)) c.close();
});

afterAll(async () => {
  other?.child.kill('SIGTERM');
  await other?.exited;
  await app?.stop();
});

const isOrderOpened = (order: number) => (e: { event: string; data: string }) =>
  e.event === 'order.opened' && (JSON.parse(e.data) as { data: { order: number } }).data.order === order;

test('when a client is connected to either API process, then it sees events caused through the other', async () => {
  const onA = await stream(app.baseUrl, '/customers/me/stream', alice.token);
  const onB = await stream(otherUrl, '/customers/me/stream', alice.token);
  expect(onB.status).toBe(200);
  const throughA = await openOrder(app, admin, aliceLogin);
  await onB.waitFor(isOrderOpened(throughA));
  const viaB = await fetch(`${otherUrl}/orders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({ login: aliceLogin, symbol: 'EURUSD', cmd: 0, volume: 0.01 }),
  });
  expect(viaB.status).toBe(201);
  const throughB = ((await viaB.json()) as { order: number }).order;
  await onA.waitFor(isOrderOpened(throughB));
  await onB.waitFor(isOrderOpened(throughB));
});

test('when a session holds five streams across both processes, then a sixth on either is refused', async () => {
  const carol = await createCustomer(app, admin);
  for (let i = 0; i < 3; i++) expect((await stream(app.baseUrl, '/streams/quotes', carol.token)).status).toBe(200);
  for (let i = 0; i < 2; i++) expect((await stream(otherUrl, '/streams/quotes', carol.token)).status).toBe(200);
  expect((await stream(otherUrl, '/streams/quotes', carol.token)).status).toBe(429);
  expect((await stream(app.baseUrl, '/streams/quotes', carol.token)).status).toBe(429);
});

test('when a client stops reading while 20,000 events are produced, then it is cut with overflow and the API memory stays bounded', async () => {
  const still = await stream(otherUrl, '/customers/me/stream', alice.token);
  still.pause();
  const pid = other.child.pid!;
  const before = rssKb(pid);
  // 20,000 events of about 1 kB each: far more than the socket buffers hold, so the server must queue or cut.
  await sql(
    app,
    `insert into domain_events (id, created_at, updated_at, type, aggregate_type, aggregate_id, customer_id, data)
     select gen_random_uuid(), now(), now(), 'deposit.completed', 'account', ?, ?, jsonb_build_object('n', n, 'pad', repeat('x', 1000))
       from generate_series(1, 20000) as n`,
    [String(aliceLogin), alice.id],
  );
  let peak = before;
  await waitFor(
    'the relay to publish the 20,000 events',
    async () => {
      peak = Math.max(peak, rssKb(pid));
      const [row] = await sql<{ n: number }>(app, 'select count(*)::int as n from domain_events where published_at is null');
      return row!.n === 0;
    },
    120_000,
  );
  await new Promise((r) => setTimeout(r, 500));
  peak = Math.max(peak, rssKb(pid));
  still.resume();
  await still.ended;
  expect(still.events[still.events.length - 1]!.event).toBe('overflow');
  expect(still.events.length).toBeLessThan(20_000);
  // At most 10,000 queued frames of about 1.1 kB (11 MB) stay in the stream; the rest of the growth is the
  // garbage of parsing 20 MB of feed messages, which V8 collects lazily (about 85 MB measured on the dev box).
  expect(peak - before).toBeLessThan(128 * 1024);
});

test('when the process gets SIGTERM, then its streams end cleanly and it exits', async () => {
  const s = await stream(otherUrl, '/customers/me/stream', alice.token);
  const started = Date.now();
  other.child.kill('SIGTERM');
  await s.ended;
  expect(Date.now() - started).toBeLessThan(3000);
  expect(s.comments).toContain('server shutting down');
  expect(await other.exited).toBe(0);
});
