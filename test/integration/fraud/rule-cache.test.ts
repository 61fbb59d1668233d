import { fraudConfigLoads } from '../../../src/domain/fraud/rule-cache';
import { adminToken, createCustomer, type LoggedIn } from '../../helpers/identity';
import { spawnService, type ServiceProcess } from '../../helpers/service-process';
import { REDIS_URL, startTestApp, type TestApp } from '../../helpers/test-app';

/**
 * Each process keeps a copy of the fraud rules and lists and checks it against the stamp every
 * change writes: a change made through one process's API decides the very next evaluation in
 * another process, which had the old rules in its copy. The other process is a real one
 * (src/main.ts, spawned), so nothing in memory is shared.
 */
jest.setTimeout(180_000);

let app: TestApp;
let other: ServiceProcess;
let otherUrl: string;
let admin: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'fraudcache', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  other = spawnService({
    ROLE: 'api',
    PORT: '0',
    DATABASE_URL: app.config.databaseUrl,
    REDIS_URL,
    QUEUE_PREFIX: app.config.queuePrefix,
    JWT_SECRET: app.config.jwt.secret,
  });
  const listening = await other.waitForLog('api listening');
  otherUrl = `http://127.0.0.1:${String(listening.port)}`;
});
afterAll(async () => {
  other?.child.kill('SIGTERM');
  await other?.exited;
  await app?.stop();
});

/** A customer login sent to the other process. */
async function loginThere(customer: LoggedIn, device: string): Promise<number> {
  const res = await fetch(`${otherUrl}/api/customer/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-device-id': device },
    body: JSON.stringify({ email: customer.email, password: customer.password }),
  });
  await res.arrayBuffer();
  return res.status;
}

test('when a rule or a list changes through one process, then the next login evaluated in another process follows the change', async () => {
  const customer = await createCustomer(app, admin);
  // The other process reads the rules once and keeps them.
  expect(await loginThere(customer, 'cache-device-1')).toBe(200);
  expect(await loginThere(customer, 'cache-device-1')).toBe(200);

  const created = await app.request('POST', '/api/backoffice/fraud/rules', {
    token: admin,
    body: {
      name: 'block this customer',
      event: 'login',
      match: 'all',
      conditions: [{ field: 'customer.id', op: 'eq', value: customer.id }],
      action: 'block',
      position: 1,
      enabled: true,
    },
  });
  expect(created.status).toBe(201);
  // Blocked: answered as a wrong password.
  expect(await loginThere(customer, 'cache-device-1')).toBe(401);

  const disabled = await app.request('PATCH', `/api/backoffice/fraud/rules/${created.body.id}`, {
    token: admin,
    body: { enabled: false },
  });
  expect(disabled.status).toBe(200);
  expect(await loginThere(customer, 'cache-device-1')).toBe(200);

  const listed = await app.request('PUT', '/api/backoffice/fraud/lists/blocked_devices/items', {
    token: admin,
    body: { items: ['cache-device-2'] },
  });
  expect(listed.status).toBe(200);
  expect(await loginThere(customer, 'cache-device-2')).toBe(401);
  expect(await loginThere(customer, 'cache-device-1')).toBe(200);

  const cleared = await app.request('PUT', '/api/backoffice/fraud/lists/blocked_devices/items', {
    token: admin,
    body: { items: [] },
  });
  expect(cleared.status).toBe(200);
  expect(await loginThere(customer, 'cache-device-2')).toBe(200);
});

test('when nothing changes between evaluations, then the process reads the rules and lists once and only the stamp afterwards', async () => {
  const customer = await createCustomer(app, admin);
  const login = () =>
    app.request('POST', '/api/customer/login', { body: { email: customer.email, password: customer.password } });
  expect((await login()).status).toBe(200);
  const loaded = fraudConfigLoads();
  for (let i = 0; i < 3; i++) expect((await login()).status).toBe(200);
  expect(fraudConfigLoads()).toBe(loaded);
  const listed = await app.request('PUT', '/api/backoffice/fraud/lists/blocked_email_domains/items', {
    token: admin,
    body: { items: ['nobody.invalid'] },
  });
  expect(listed.status).toBe(200);
  expect((await login()).status).toBe(200);
  expect(fraudConfigLoads()).toBe(loaded + 1);
});
