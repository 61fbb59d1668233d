import { randomBytes } from 'node:crypto';
import { adminToken } from '../../helpers/identity';
import { spawnService, type ServiceProcess } from '../../helpers/service-process';
import { REDIS_URL, sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver';

/**
 * The worker tier is SIGKILLed while a delivery is in flight (the receiver holds the request
 * open). Another worker takes the delivery over once its lease lapses and sends it again under
 * the same webhook-id: no event is lost, every batch keeps its events, and the order holds.
 */
jest.setTimeout(90_000);

let app: TestApp;
let receiver: Receiver;
const workers: ServiceProcess[] = [];
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

beforeAll(async () => {
  app = await startTestApp({ label: 'webhookfault', env: { ROLE: 'api' } });
});
afterAll(async () => {
  for (const w of workers) w.child.kill('SIGKILL');
  await app?.stop();
  await receiver?.close();
});

function startWorker(): ServiceProcess {
  const worker = spawnService({
    ROLE: 'worker',
    DATABASE_URL: app.config.databaseUrl,
    REDIS_URL,
    QUEUE_PREFIX: app.config.queuePrefix,
    JWT_SECRET: app.config.jwt.secret,
    WEBHOOKS_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_TIMEOUT_MS: '3000',
    OUTBOX_RELAY_INTERVAL_MS: '200',
    WORKER_CONCURRENCY: '2',
    WORKER_LOCK_MS: '2000',
  });
  workers.push(worker);
  return worker;
}

test('when the worker is SIGKILLed mid-delivery, then another delivers that batch again under the same id and no event is lost', async () => {
  // The first request is held open (the worker dies during it); every later one is answered.
  receiver = await startReceiver(SECRET, (n) => (n === 0 ? 'hang' : { status: 200 }));
  const admin = await adminToken(app);
  const made = await app.request('POST', '/webhooks', {
    token: admin,
    body: { endpoint_url: receiver.url, secret: SECRET, events: ['order.opened'], batch_size_max: 10 },
  });
  expect(made.status).toBe(201);
  await sql(
    app,
    `insert into domain_events (id, created_at, updated_at, type, aggregate_type, aggregate_id, data)
     select gen_random_uuid(), now(), now(), 'order.opened', 'order', 'acct-1', jsonb_build_object('n', i) from generate_series(1, 35) i`,
  );
  const ids = (await sql<{ id: string }>(app, "select id from domain_events where type = 'order.opened' order by seq")).map(
    (r) => r.id,
  );

  const first = startWorker();
  await first.waitForLog('workers started');
  await waitFor('the first delivery in flight', async () => receiver.received.length > 0, 20_000);
  first.child.kill('SIGKILL');
  await first.exited;
  const killedId = receiver.received[0]!.headers['webhook-id'];

  const second = startWorker();
  await second.waitForLog('workers started');
  await waitFor('every event delivered', async () => new Set(receiver.eventIds()).size === ids.length, 40_000);

  // Every request verified; the killed batch came again under its id, with the same events.
  expect(receiver.received.every((r) => r.verified !== null)).toBe(true);
  const byId = new Map<string, string[]>();
  for (const r of receiver.received) {
    const events = r.verified!.events.map((e) => e.id);
    const id = String(r.headers['webhook-id']);
    if (byId.has(id)) expect(events).toEqual(byId.get(id));
    byId.set(id, events);
  }
  expect(receiver.received.filter((r) => r.headers['webhook-id'] === killedId).length).toBe(2);
  // In write order, once each, across the distinct batches.
  expect([...byId.values()].flat()).toEqual(ids);
  const [stale] = await sql<{ error: string }>(
    app,
    'select a.error from webhook_attempts a where a.delivery_id = ? and a.status_code is null order by a.attempt limit 1',
    [killedId],
  );
  expect(stale?.error).toMatch(/worker stopped/);
});
