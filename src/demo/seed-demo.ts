// First, before any native addon loads (see src/main.ts).
import '../../scripts/check-node';
/**
 * `npm run demo` (in the image `node dist/demo/seed-demo.js`: the compose `demo` service)
 * seeds a small demo broker into the configured database and Redis, so the docs page and the dashboards show something alive: instruments with quotes, a group, a
 * customer with a wallet and a funded live account holding two positions, and the random
 * walk moving the prices. It starts the service's API tier in this process (migrating the
 * database if needed) and seeds through the public HTTP API, the way a client would.
 * Run it again at any time: what exists is kept, and the demo passwords are renewed.
 * The workers of a running `npm start` (or `npm run start:worker`) move the prices; the
 * service sees the demo only when it runs with the same DATABASE_URL and QUEUE_PREFIX.
 */
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { loadConfig, type Config } from '../config/config';
import { applyDotEnv } from '../config/dotenv';
import { createStaffUser } from '../domain/identity/staff';
import { hashPassword } from '../domain/identity/passwords';
import { ADMIN_ROLE } from '../domain/identity/permissions';
import { Customer } from '../entities/customer.entity';
import { Role } from '../entities/role.entity';
import { StaffUser } from '../entities/staff-user.entity';
import { startRuntime } from '../runtime';
import { createLogger } from '../platform/logger';
import { StartupRefused } from '../startup-refused';

export const DEMO_DEALER = 'demo-dealer@trading.localhost';
export const DEMO_CUSTOMER = 'demo-customer@trading.localhost';
const GROUP = 'Demo Standard';

const INSTRUMENTS = [
  { symbol: 'EURUSD', digits: 5, contract_size: 100000, base_currency: 'EUR', quote_currency: 'USD', bid: 1.08512, ask: 1.08527 },
  { symbol: 'GBPUSD', digits: 5, contract_size: 100000, base_currency: 'GBP', quote_currency: 'USD', bid: 1.26431, ask: 1.26449 },
  { symbol: 'USDJPY', digits: 3, contract_size: 100000, base_currency: 'USD', quote_currency: 'JPY', bid: 151.204, ask: 151.221 },
  { symbol: 'XAUUSD', digits: 2, contract_size: 100, base_currency: 'XAU', quote_currency: 'USD', bid: 2385.1, ask: 2385.55 },
  { symbol: 'BTCUSD', digits: 2, contract_size: 1, base_currency: 'BTC', quote_currency: 'USD', bid: 67012.5, ask: 67031.5 },
];

export interface DemoLogins {
  dealer: { email: string; password: string };
  customer: { email: string; password: string; login: number };
}

// The demo reads answers loosely; the integration tests hold every answer to its contract.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

/** A dealer with the admin role, created or given a new password: the demo seeds as this user. */
async function demoDealer(em: EntityManager): Promise<{ email: string; password: string }> {
  const password = randomBytes(15).toString('base64url');
  const existing = await em.findOne(StaffUser, { email: DEMO_DEALER });
  if (existing) {
    existing.passwordHash = await hashPassword(password);
    existing.isActive = true;
    await em.flush();
  } else {
    const admin = await em.findOneOrFail(Role, { name: ADMIN_ROLE });
    await createStaffUser(em, 'system', { email: DEMO_DEALER, password, full_name: 'Demo Dealer', role_ids: [admin.id] });
  }
  return { email: DEMO_DEALER, password };
}

function expectStatus(res: { status: number; body: unknown }, allowed: number[], what: string): void {
  if (!allowed.includes(res.status)) throw new Error(`${what}: answered ${res.status} ${JSON.stringify(res.body)}`);
}

/** Seeds through the API; every step tolerates what an earlier run created. */
export async function seedDemo(call: Call, em: EntityManager): Promise<DemoLogins['customer']> {
  for (const { bid, ask, ...instrument } of INSTRUMENTS) {
    expectStatus(await call('POST', '/api/platform/instruments', instrument), [201, 409], `instrument ${instrument.symbol}`);
    expectStatus(
      await call('POST', '/simulator/quotes', { symbol: instrument.symbol, bid, ask }),
      [200],
      `quote ${instrument.symbol}`,
    );
  }

  const groups = await call('GET', '/groups?page_size=100');
  let group = groups.body.items.find((g: { name: string }) => g.name === GROUP);
  if (!group) {
    const created = await call('POST', '/groups', { name: GROUP, default_leverage: 100 });
    expectStatus(created, [201], 'group');
    group = await call('PATCH', `/groups/${created.body.id}`, { is_default: true }).then((r) => r.body);
  }

  const password = randomBytes(15).toString('base64url');
  let customer = await em.findOne(Customer, { email: DEMO_CUSTOMER });
  if (!customer) {
    const created = await call('POST', '/api/crm/customers', {
      email: DEMO_CUSTOMER,
      password,
      first_name: 'Demo',
      last_name: 'Customer',
      locale: 'en',
      country: 'GB',
    });
    expectStatus(created, [201], 'customer');
    customer = await em.findOneOrFail(Customer, { email: DEMO_CUSTOMER });
  } else {
    customer.passwordHash = await hashPassword(password);
    await em.flush();
  }

  const accounts = await call('GET', `/api/crm/customers/${customer.id}/accounts`);
  let live = accounts.body.items.find((a: { kind: string }) => a.kind === 'live');
  if (!live) {
    const opened = await call('POST', `/api/crm/customers/${customer.id}/accounts`, { kind: 'live', group_id: group.id });
    expectStatus(opened, [201], 'live account');
    live = opened.body;
    expectStatus(
      await call('POST', `/api/backoffice/accounts/${live.login}/deposits`, { amount: 10000, comment: 'Demo funding' }),
      [201],
      'deposit',
    );
    const wallet = accounts.body.items.find((a: { kind: string }) => a.kind === 'wallet');
    if (wallet)
      expectStatus(
        await call('POST', `/api/backoffice/accounts/${wallet.login}/deposits`, { amount: 2500 }),
        [201],
        'wallet deposit',
      );
    expectStatus(
      await call('POST', '/orders', { login: live.login, symbol: 'EURUSD', cmd: 0, volume: 0.5, comment: 'demo' }),
      [201],
      'order',
    );
    expectStatus(
      await call('POST', '/orders', { login: live.login, symbol: 'XAUUSD', cmd: 1, volume: 0.1, comment: 'demo' }),
      [201],
      'order',
    );
  }

  expectStatus(
    await call('PUT', '/simulator/random-walk', {
      enabled: true,
      symbols: INSTRUMENTS.map((i) => i.symbol),
      interval_ms: 1000,
      volatility_bps: 5,
    }),
    [200],
    'random walk',
  );
  return { email: DEMO_CUSTOMER, password, login: Number(live.login) };
}

/** Starts the API tier in-process on a free port, seeds, and stops again. */
export async function runDemo(config: Config): Promise<DemoLogins> {
  const runtime = await startRuntime(
    // Its own API on loopback, on a free port: the real service may be using PORT already.
    { ...config, role: 'api', host: '127.0.0.1', port: 0 },
    { logger: createLogger('warn'), defaultMetrics: false },
  );
  try {
    const em = runtime.services.orm.em.fork() as EntityManager;
    const dealer = await demoDealer(em);
    const base = `http://127.0.0.1:${runtime.port}`;
    const login = await fetch(`${base}/api/admin/users/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(dealer),
    });
    if (login.status !== 200) throw new Error(`the demo dealer could not log in: ${login.status} ${await login.text()}`);
    const { access_token: token } = (await login.json()) as { access_token: string };
    const call: Call = async (method, path, body) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };
    const customer = await seedDemo(call, em);
    return { dealer, customer };
  } finally {
    await runtime.stop();
  }
}

/** Where the service this demo seeded for answers: its HOST and PORT, as a browser on this machine reaches them. */
export function serviceAddress(config: Pick<Config, 'host' | 'port'>): string {
  const host = ['0.0.0.0', '::'].includes(config.host)
    ? 'localhost'
    : config.host.includes(':')
      ? `[${config.host}]`
      : config.host;
  return `http://${host}:${config.port}`;
}

/** The database and queues seeded, named without credentials. */
function seededWhere(config: Config): string {
  const db = new URL(config.databaseUrl);
  return `database ${decodeURIComponent(db.pathname.slice(1))} on ${db.hostname}:${db.port || 5432} (DATABASE_URL), queue prefix ${config.queuePrefix} (QUEUE_PREFIX)`;
}

if (require.main === module) {
  applyDotEnv();
  const config = loadConfig();
  const docs = `${serviceAddress(config)}/docs`;
  runDemo(config).then(
    ({ dealer, customer }) => {
      process.stdout.write(
        [
          `The demo broker is seeded into ${seededWhere(config)}.`,
          'The service must run with the same DATABASE_URL and QUEUE_PREFIX to see it; start it (npm start)',
          'if it is not running: its workers move the prices.',
          '',
          `  Staff (every permission):  ${dealer.email}  /  ${dealer.password}`,
          `    POST /api/admin/users/login, then try /groups, /orders, /api/crm/customers on ${docs}`,
          `  Customer:                  ${customer.email}  /  ${customer.password}`,
          `    POST /api/customer/login; live account ${customer.login} holds two open positions`,
          '',
          'These passwords are shown once; run npm run demo again for new ones.',
          '',
        ].join('\n'),
      );
      process.exit(0);
    },
    (err: unknown) => {
      process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(err instanceof StartupRefused ? err.exitCode : 1);
    },
  );
}
