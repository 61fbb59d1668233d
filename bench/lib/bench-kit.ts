import { randomBytes } from 'node:crypto';
import { Client, Pool } from 'pg';
import type { RunWindow, Server } from './harness';
import { call, type LoadResult } from './load';

/**
 * What every service benchmark needs besides the harness: a database of its own run, a
 * checked call to the service, the median and progress lines on stderr.
 */

/** Where benchmark databases live; each run creates one of its own below it and drops it. */
export const BASE_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/trading_bench';

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * A pool on a bench database, for the baselines and checks. It ignores errors of idle
 * connections: pool.end() resolves while its connections are still closing, and the drop
 * that follows (WITH (FORCE)) terminates them, which a pool without a listener throws as an
 * unhandled 'error' that ended a whole `npm run bench` after the transfers bench.
 */
export function benchPool(connectionString: string, max: number): Pool {
  const pool = new Pool({ connectionString, max });
  pool.on('error', () => undefined);
  return pool;
}

export async function dropDatabase(database: string): Promise<void> {
  const client = new Client({ connectionString: withDatabase(BASE_DATABASE_URL, 'postgres') });
  await client.connect();
  try {
    await client.query(`drop database if exists "${database.replace(/"/g, '""')}" with (force)`);
  } finally {
    await client.end();
  }
}

/** A bench's own database and queue prefix: what its service and workers run on, and how it goes. */
export interface OwnDatabase {
  tag: string;
  database: string;
  /** BENCH_DATABASE_URL and BENCH_QUEUE_PREFIX, for every child of the bench. */
  env: { BENCH_DATABASE_URL: string; BENCH_QUEUE_PREFIX: string };
  /** The same plus the bench admin's bootstrap login: the API child's. */
  apiEnv: Record<string, string>;
  pool: Pool;
  /** Ends the pool and drops the database (children stopped first, by the caller). */
  close(): Promise<void>;
}

/**
 * A database of the bench's own, `trading_bench_<name>_<tag>` (created and migrated by the
 * first child started on it), a queue prefix to match, and a pool of `poolSize` to it.
 */
export function ownDatabase(name: string, poolSize = 2): OwnDatabase {
  const tag = randomBytes(4).toString('hex');
  const database = `trading_bench_${name}_${tag}`;
  const env = { BENCH_DATABASE_URL: withDatabase(BASE_DATABASE_URL, database), BENCH_QUEUE_PREFIX: `bench-${name}-${tag}` };
  const pool = benchPool(env.BENCH_DATABASE_URL, poolSize);
  const progress = progressOf(name);
  return {
    tag,
    database,
    env,
    apiEnv: { ...env, BOOTSTRAP_ADMIN_EMAIL: BENCH_ADMIN.email, BOOTSTRAP_ADMIN_PASSWORD: BENCH_ADMIN.password },
    pool,
    close: async () => {
      await pool.end().catch(() => undefined);
      await dropDatabase(database).catch((err: unknown) => progress(`could not drop database ${database}: ${String(err)}`));
    },
  };
}

/** One call to the service during set-up or checks: anything but the expected status stops the run. */
export async function request<T>(
  api: Server,
  method: string,
  path: string,
  token: string,
  body: unknown,
  status: number | number[],
): Promise<T> {
  const reply = await call(api.url(path), {
    method,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    body: body === undefined ? undefined : (body as object),
  });
  if (!(Array.isArray(status) ? status : [status]).includes(reply.status)) {
    throw new Error(`${method} ${path} answered ${reply.status}: ${reply.body.slice(0, 300)}`);
  }
  return (reply.body ? JSON.parse(reply.body) : undefined) as T;
}

/** The median of the numbers given, NaN ignored (a round that measured nothing); NaN when none. */
export function median(values: number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A progress printer for one benchmark: lines on stderr, so results on stdout stay clean. */
export function progressOf(bench: string): (message: string) => void {
  return (message) => process.stderr.write(`  ${bench}: ${message}\n`);
}

/**
 * A baseline's closed loop in this process, measured as lib/load's `measure` measures HTTP:
 * `window.connections` workers, each running `operation` (with a sequence number) and waiting
 * for it before the next, latencies counted inside the window after warm-up. A failing
 * operation counts as an error; the first one is reported through `progress`.
 */
export async function measureLoop(
  window: RunWindow,
  operation: (seq: number) => Promise<unknown>,
  progress: (message: string) => void,
): Promise<LoadResult> {
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  const windowStart = start + window.warmupMs;
  const end = windowStart + window.durationMs;
  const latencies: number[] = [];
  let errors = 0;
  let n = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      const began = performance.now();
      try {
        await operation(n++);
      } catch (err) {
        errors++;
        if (errors === 1) progress(`baseline operation failed: ${String(err)}`);
      }
      const done = performance.now();
      if (began >= windowStart && done <= end) latencies.push(done - began);
    }
  };
  await Promise.all(Array.from({ length: window.connections }, worker));
  const cpu = process.cpuUsage(cpuBefore);
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return {
    requests: latencies.length,
    rps: latencies.length / (window.durationMs / 1000),
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    errors,
    non2xx: 0,
    loadCpu: (cpu.user + cpu.system) / 1000 / (performance.now() - start),
  };
}

/**
 * A customer with a live account in `groupId`, made through the API as staff would make it,
 * and its customer token.
 */
export async function benchCustomer(
  api: Server,
  adminToken: string,
  options: { email: string; lastName: string; groupId: string },
): Promise<{ customerId: string; liveLogin: number; token: string }> {
  const password = `bench-${randomBytes(9).toString('base64url')}`;
  const customer = await request<{ id: string }>(
    api,
    'POST',
    '/api/crm/customers',
    adminToken,
    { email: options.email, password, first_name: 'Bench', last_name: options.lastName },
    201,
  );
  const live = await request<{ login: number }>(
    api,
    'POST',
    `/api/crm/customers/${customer.id}/accounts`,
    adminToken,
    { kind: 'live', group_id: options.groupId },
    201,
  );
  const login = await request<{ access_token: string }>(
    api,
    'POST',
    '/api/customer/login',
    '',
    { email: options.email, password },
    200,
  );
  return { customerId: customer.id, liveLogin: live.login, token: login.access_token };
}

/** The staff user every bench's service bootstraps (BOOTSTRAP_ADMIN_*) and logs in as. */
export const BENCH_ADMIN = { email: 'bench-admin@bench.test', password: 'bench-desk-key-7719' } as const;

/** EURUSD listed and quoted at 1.10000 / 1.10020, and a group of `group`'s terms to trade it in: its id. */
export async function eurusdGroup(api: Server, admin: string, group: Record<string, unknown>): Promise<string> {
  await request(
    api,
    'POST',
    '/api/platform/instruments',
    admin,
    { symbol: 'EURUSD', digits: 5, contract_size: 100000, base_currency: 'EUR', quote_currency: 'USD' },
    [201, 409],
  );
  await request(api, 'POST', '/simulator/quotes', admin, { symbol: 'EURUSD', bid: 1.1, ask: 1.1002 }, 200);
  return (await request<{ id: string }>(api, 'POST', '/groups', admin, group, 201)).id;
}
