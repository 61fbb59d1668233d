import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config/config';
import { GENERATED_ADMIN_EMAIL } from '../../src/domain/identity/staff';
import { runDemo } from '../../src/demo/seed-demo';
import { spawnService, type ServiceProcess } from '../helpers/service-process';
import { REDIS_URL, obliterateQueues, waitFor } from '../helpers/test-app';
import { cloneTemplateDatabase, databaseUrl, dropDatabase } from '../helpers/test-database';

jest.setTimeout(90_000);

/** A newcomer's first run: `npm start` with no environment, then `npm run demo`. */
const running: ServiceProcess[] = [];
afterEach(() => {
  for (const p of running.splice(0)) p.child.kill('SIGKILL');
});

async function login(port: unknown, path: string, email: string, password: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  return res.status;
}

test('when the service starts with no staff user and no bootstrap variables, then it creates an admin and shows its password once', async () => {
  const name = `t_first_${randomBytes(4).toString('hex')}`;
  const prefix = `test-${randomBytes(6).toString('hex')}`;
  const env = { DATABASE_URL: databaseUrl(name), REDIS_URL, PORT: '0', QUEUE_PREFIX: prefix, NODE_ENV: 'development' };
  try {
    const first = spawnService({ ...env, JWT_SECRET: randomBytes(32).toString('hex') });
    running.push(first);
    const listening = await first.waitForLog('api listening');
    const shown = /email:\s+(\S+)\n\s+password:\s+(\S+)/.exec(first.stderr());
    expect(shown).not.toBeNull();
    const [, email, password] = shown!;
    expect(email).toBe(GENERATED_ADMIN_EMAIL);
    expect(password!.length).toBeGreaterThanOrEqual(20);
    expect(await login(listening.port, '/api/admin/users/login', email!, password!)).toBe(200);
    // The password is never in the structured log.
    expect(JSON.stringify(first.logs)).not.toContain(password);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const second = spawnService({ ...env, JWT_SECRET: randomBytes(32).toString('hex') });
    running.push(second);
    await second.waitForLog('api listening');
    expect(second.stderr()).not.toMatch(/password:/);
    second.child.kill('SIGTERM');
    await second.exited;
  } finally {
    await obliterateQueues(prefix);
    await dropDatabase(name);
  }
});

test('when npm run demo seeds a broker, then its staff and customer log in, prices are quoted and walking, and positions are open', async () => {
  const name = await cloneTemplateDatabase('demo');
  const prefix = `test-${randomBytes(6).toString('hex')}`;
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl(name),
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    JWT_SECRET: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
  });
  const service = spawnService({
    DATABASE_URL: databaseUrl(name),
    QUEUE_PREFIX: prefix,
    REDIS_URL,
    PORT: '0',
    JWT_SECRET: config.jwt.secret,
    BOOTSTRAP_ADMIN_EMAIL: 'owner@broker.test',
    BOOTSTRAP_ADMIN_PASSWORD: 'harbour-violet-3318',
  });
  running.push(service);
  try {
    const { port } = await service.waitForLog('api listening');
    const first = await runDemo(config);
    // A second run keeps what exists and renews the passwords.
    const { dealer, customer } = await runDemo(config);
    expect(customer.login).toBe(first.customer.login);
    expect(dealer.password).not.toBe(first.dealer.password);

    expect(await login(port, '/api/admin/users/login', dealer.email, dealer.password)).toBe(200);
    expect(await login(port, '/api/customer/login', customer.email, customer.password)).toBe(200);
    expect(await login(port, '/api/customer/login', customer.email, first.customer.password)).toBe(401);

    const staff = await fetch(`http://127.0.0.1:${port}/api/admin/users/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(dealer),
    }).then((r) => r.json() as Promise<{ access_token: string }>);
    const get = (path: string) =>
      fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${staff.access_token}` } }).then(
        (r) => r.json() as Promise<any>,
      );
    const quotes = await get('/simulator/quotes');
    expect(quotes.items.map((q: { symbol: string }) => q.symbol).sort()).toEqual([
      'BTCUSD',
      'EURUSD',
      'GBPUSD',
      'USDJPY',
      'XAUUSD',
    ]);
    expect((await get('/simulator/random-walk')).enabled).toBe(true);
    const orders = await get(`/orders?login=${customer.login}&status=open`);
    expect(orders.items).toHaveLength(2);
    // The service's workers move the prices.
    const before = JSON.stringify(quotes.items.map((q: { bid: number }) => q.bid));
    await waitFor(
      'the random walk to move a price',
      async () => JSON.stringify((await get('/simulator/quotes')).items.map((q: { bid: number }) => q.bid)) !== before,
      15_000,
    );
  } finally {
    service.child.kill('SIGTERM');
    await service.exited;
    await obliterateQueues(prefix);
    await dropDatabase(name);
  }
});
