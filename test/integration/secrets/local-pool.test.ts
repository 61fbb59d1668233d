import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client } from 'pg';
import { UNSEAL_FAILURE_LOG } from '../../../src/domain/secrets/sealed-columns';
import { ADMIN } from '../../helpers/identity';
import { spawnService, type ServiceProcess } from '../../helpers/service-process';
import { cloneTemplateDatabase, databaseUrl, directDatabaseUrl, dropDatabase } from '../../helpers/test-database';
import { obliterateQueues, REDIS_URL, testQueuePrefix, waitFor } from '../../helpers/test-app';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver';
import { DEVELOPMENT_JWT_KEY_ID } from '../../../src/domain/secrets/data-keys';

/**
 * The pool commands of docs/operations.md, as a developer runs them: the built service as `npm run
 * start:api` and two `npm run start:worker`, with neither JWT_SECRET nor DATA_ENCRYPTION_KEYS
 * and NODE_ENV not production. Each process used to seal under its own random JWT_SECRET, so
 * no worker could open the webhook secret the API had sealed and deliveries stayed pending
 * for ever. Now the first process stores a development key and all three share it.
 */
jest.setTimeout(240_000);

const ROOT = join(__dirname, '..', '..', '..');
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

let database: string;
let prefix: string;
let receiver: Receiver;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  // What `npm run start:api` and `npm run start:worker` run first (their prestart scripts).
  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'pipe' });
  database = await cloneTemplateDatabase('localpool');
  prefix = testQueuePrefix();
  receiver = await startReceiver(SECRET);
}, 180_000);

afterAll(async () => {
  for (const p of processes) p.child.kill('SIGKILL');
  await Promise.all(processes.map((p) => p.exited));
  await receiver?.close();
  if (prefix) await obliterateQueues(prefix);
  if (database) await dropDatabase(database);
});

function start(role: 'api' | 'worker'): ServiceProcess {
  const service = spawnService(
    {
      NODE_ENV: 'development',
      ROLE: role,
      PORT: '0',
      // A worker's own HTTP port, where the service has one: two workers on one host must not collide.
      WORKER_HTTP_PORT: '0',
      DATABASE_URL: databaseUrl(database),
      REDIS_URL,
      QUEUE_PREFIX: prefix,
      BOOTSTRAP_ADMIN_EMAIL: ADMIN.email,
      BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
      WEBHOOKS_ALLOW_PRIVATE_URLS: 'true',
      OUTBOX_RELAY_INTERVAL_MS: '200',
    },
    { built: true },
  );
  processes.push(service);
  return service;
}

/** The development keys stored, by id: the data key, and the signing key when JWT_SECRET is unset too. */
async function developmentKeys(): Promise<string[]> {
  const db = new Client({ connectionString: directDatabaseUrl(database) });
  await db.connect();
  try {
    return (await db.query<{ id: string }>('select id from development_data_keys order by id')).rows.map((r) => r.id);
  } finally {
    await db.end();
  }
}

async function call(base: string, method: string, path: string, body?: unknown, token?: string) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

test('when the API and two workers start with no keys set, then they share one development key and a webhook is delivered', async () => {
  expect(await developmentKeys()).toEqual([]);

  // All three at once: whichever inserts first, the others read its key.
  const api = start('api');
  const workers = [start('worker'), start('worker')];
  const listening = await api.waitForLog('api listening', 60_000);
  await Promise.all(workers.map((w) => w.waitForLog('workers started', 60_000)));
  // One data key and one signing key, shared by the three processes.
  const keys = await developmentKeys();
  expect(keys).toHaveLength(2);
  expect(keys).toContain(DEVELOPMENT_JWT_KEY_ID);
  for (const p of [api, ...workers]) {
    expect(p.logs.some((l) => String(l.msg).startsWith('DATA_ENCRYPTION_KEYS is not set'))).toBe(true);
  }

  const base = `http://127.0.0.1:${listening.port as number}`;
  const login = await call(base, 'POST', '/api/admin/users/login', { email: ADMIN.email, password: ADMIN.password });
  expect(login.status).toBe(200);
  const token = login.body.access_token as string;
  const made = await call(base, 'POST', '/webhooks', { endpoint_url: receiver.url, secret: SECRET }, token);
  expect(made.status).toBe(201);
  const sent = await call(base, 'POST', `/webhooks/${made.body.id as string}/test`, undefined, token);
  expect(sent.status).toBe(202);

  // A worker (the API runs none) opened the secret the API sealed, and signed with it.
  await waitFor('the test event at the receiver', async () => receiver.eventIds().includes(sent.body.event_id as string), 30_000);
  const delivered = receiver.received.find((r) => r.verified?.events.some((e) => e.id === sent.body.event_id));
  expect(delivered?.verified?.events[0]).toMatchObject({ type: 'webhook.test' });
  for (const p of [api, ...workers]) expect(p.logs.filter((l) => l.msg === UNSEAL_FAILURE_LOG)).toEqual([]);
});

test('when production starts without DATA_ENCRYPTION_KEYS, then it stops with exit 78 naming the variable', async () => {
  const service = spawnService(
    {
      NODE_ENV: 'production',
      JWT_SECRET: randomBytes(32).toString('base64url'),
      DATABASE_URL: databaseUrl(database),
      REDIS_URL,
      QUEUE_PREFIX: prefix,
    },
    { built: true },
  );
  processes.push(service);
  expect(await service.exited).toBe(78);
  expect(service.stderr()).toMatch(/DATA_ENCRYPTION_KEYS: required in production/);
});
