import { BENCH_ADMIN as ADMIN, median } from './lib/bench-kit';
import { cpuSecondsByName, cpuSecondsSince, processCpuSeconds } from './lib/cpu';
import { CHILD_EXEC_ARGV, fmt, type Figure, type Harness } from './lib/harness';
import { call, measure, type LoadOptions, type LoadResult } from './lib/load';

/** The public clone of GET /api/admin/settings that servers/service-open-route.ts adds. */
const OPEN_SETTINGS_PATH = '/bench/settings';
/** Password hashing is slow by design: a few requests in flight, as a login burst would have. */
const LOGIN_CONNECTIONS = 8;
/**
 * Logins are about 50 a second here, and this host's speed drifts by ten percent from one
 * 3 s window to the next (one run's rounds: 53 48 48 50 44 against 55 56 51 55 49): over 3 s
 * the median of five rounds moved the ratio by several percent between runs. Ten-second
 * rounds average that drift inside each round.
 */
const LOGIN_ROUND_MS = 10_000;
/**
 * What authentication costs is within a few percent of nothing (the CPU per request, printed
 * after the figure, is about equal on both sides), while a round's ratio on this host still
 * moves by ±20 % with the machine: the median of nine rounds, not five, holds the figure.
 */
const GET_ROUNDS = 9;
/**
 * The login throttle counts an attempt before checking its password and gives it back on
 * success, so more than 5 logins in flight for one account from one address get 429 even with
 * the right password. The logins are therefore spread over this many staff users, so that no
 * account has more than a few in flight (the address limit, 30 in flight, is not reached at 8).
 */
const LOGIN_ACCOUNTS = Array.from({ length: 16 }, (_, i) => ({
  email: `bench-login-${i}@bench.test`,
  password: 'ledger-quartz-7719',
}));

/**
 * What authentication costs:
 * 1. GET /api/admin/settings with the admin's Bearer token against its public clone
 *    GET /bench/settings without one, on the same server process: the ratio is the share of
 *    throughput left after verifying the JWT and reading the session from Redis (aim: at
 *    least 0.8, i.e. authentication costs at most 20 percent).
 * 2. Password logins per second against the bare argon2id hash rate of this machine at the
 *    same concurrency: the ratio is the share of the hashing ceiling a login reaches.
 */
export async function run(h: Harness): Promise<Figure[]> {
  const [service, hasher] = await Promise.all([
    h.start({
      entry: 'servers/service-open-route.ts',
      // Compiled as `npm start` runs it, with BENCH_CHILD_FLAGS (e.g. --cpu-prof) to profile it.
      execArgv: CHILD_EXEC_ARGV,
      env: { BENCH_ADMIN_EMAIL: ADMIN.email, BENCH_ADMIN_PASSWORD: ADMIN.password },
    }),
    h.start({ entry: 'servers/argon2-hash.ts' }),
  ]);

  const login = await call(service.url('/api/admin/users/login'), { method: 'POST', body: ADMIN });
  if (login.status !== 200) throw new Error(`bench admin login answered ${login.status}: ${login.body.slice(0, 300)}`);
  const pair = JSON.parse(login.body) as { access_token: string; expires_in: number };
  // The token must outlive all three comparisons, 2 sides each: GET_ROUNDS of the authenticated
  // GET (1 s warm-up + 3 s), 5 of the logins (1 s + LOGIN_ROUND_MS) and 5 of the GET during a
  // burst (1 s + 3 s), each side's round cut in slices with a short warm-up each, and a settling
  // run of each side before the first round: half as much again covers those.
  const tokenNeededSeconds = 1.5 * 2 * (GET_ROUNDS * 4 + 5 * (1 + LOGIN_ROUND_MS / 1000) + 5 * 4);
  if (pair.expires_in < tokenNeededSeconds) {
    throw new Error(`access tokens live ${pair.expires_in} s in the bench database (broker setting): too short to measure`);
  }

  await ensureLoginAccounts(service.url(''), pair.access_token);

  const figures: Figure[] = [];
  // On a shared host a side's rps swings by more than authentication costs from one round to
  // the next; what each request cost the service and Redis in CPU does not, so it is noted too.
  const cpu = { candidate: [] as CpuPerRequest[], baseline: [] as CpuPerRequest[] };
  const authenticated = { url: service.url('/api/admin/settings'), headers: { authorization: `Bearer ${pair.access_token}` } };
  figures.push(
    await h.compareRuns({
      name: 'GET /api/admin/settings rps, with Bearer auth vs the same route public',
      candidate: (window) => withCpu(cpu.candidate, service.pid, { ...authenticated, ...window }),
      baseline: (window) => withCpu(cpu.baseline, service.pid, { url: service.url(OPEN_SETTINGS_PATH), ...window }),
      connections: 32,
      rounds: GET_ROUNDS,
    }),
  );
  const per = (shares: CpuPerRequest[], key: keyof CpuPerRequest) => fmt(median(shares.map((c) => c[key] * 1000)), 0);
  process.stderr.write(
    `  auth: CPU µs per request (medians), authenticated and public: the service ${per(cpu.candidate, 'service')} and ` +
      `${per(cpu.baseline, 'service')}, Redis ${per(cpu.candidate, 'redis')} and ${per(cpu.baseline, 'redis')}\n`,
  );
  // A login is its hash plus a fixed cost beside it (HTTP, two Redis scripts, two statements, a
  // JWT, the session cache): what each side spent per unit, the hash included, says how big.
  const loginCpu = { candidate: [] as CpuPerRequest[], baseline: [] as CpuPerRequest[] };
  const logins = {
    url: service.url('/api/admin/users/login'),
    method: 'POST',
    body: (seq: number) => LOGIN_ACCOUNTS[seq % LOGIN_ACCOUNTS.length]!,
  };
  figures.push(
    await h.compareRuns({
      name: `staff logins/s vs bare argon2id hashes/s (m=19456 t=2 p=1), ${LOGIN_CONNECTIONS} in flight`,
      candidate: (window) => withCpu(loginCpu.candidate, service.pid, { ...logins, ...window }),
      baseline: (window) =>
        withCpu(loginCpu.baseline, hasher.pid, { url: hasher.url('/hash'), method: 'POST', body: {}, ...window }),
      connections: LOGIN_CONNECTIONS,
      durationMs: LOGIN_ROUND_MS,
    }),
  );
  const ms = (shares: CpuPerRequest[], key: keyof CpuPerRequest) => fmt(median(shares.map((c) => c[key])), 2);
  process.stderr.write(
    `  auth: CPU ms per login and per bare hash (medians): the service process ${ms(loginCpu.candidate, 'service')} ` +
      `against the hasher's ${ms(loginCpu.baseline, 'service')}; Postgres ${ms(loginCpu.candidate, 'postgres')} and ` +
      `${ms(loginCpu.baseline, 'postgres')}, Redis ${ms(loginCpu.candidate, 'redis')} and ${ms(loginCpu.baseline, 'redis')}\n`,
  );
  // argon2 hashes on libuv's thread pool, not the event loop: an authenticated read served
  // while logins hash should keep its latency. The candidate side reads while a login burst
  // runs beside it for the same window; the baseline reads alone. Compare the p99s.
  const settings = { url: service.url('/api/admin/settings'), headers: { authorization: `Bearer ${pair.access_token}` } };
  const loginBurst = {
    url: service.url('/api/admin/users/login'),
    method: 'POST',
    body: (seq: number) => LOGIN_ACCOUNTS[seq % LOGIN_ACCOUNTS.length]!,
  };
  figures.push(
    await h.compareRuns({
      name: `GET /api/admin/settings rps with Bearer auth, during a login burst (${LOGIN_CONNECTIONS} in flight) vs alone, 4 in flight`,
      candidate: async (window) => {
        const [reads] = await Promise.all([
          measure({ ...settings, ...window }),
          measure({ ...loginBurst, ...window, connections: LOGIN_CONNECTIONS }),
        ]);
        return reads;
      },
      baseline: (window) => measure({ ...settings, ...window }),
      connections: 4,
    }),
  );
  return figures;
}

/** CPU ms per request over a round (warm-up included). */
interface CpuPerRequest {
  /** The process serving the side: the service, or the bare hasher. */
  service: number;
  redis: number;
  postgres: number;
}

/** Measures one side and notes the CPU the serving process, Redis and Postgres spent per request. */
async function withCpu(into: CpuPerRequest[], pid: number, options: LoadOptions): Promise<LoadResult> {
  const before = { service: processCpuSeconds(pid) ?? NaN, others: cpuSecondsByName(['redis-server', 'postgres']) };
  const result = await measure(options);
  const requests = result.rps * ((options.durationMs + options.warmupMs) / 1000);
  into.push({
    service: (((processCpuSeconds(pid) ?? NaN) - before.service) * 1000) / requests,
    redis: (cpuSecondsSince(before.others, 'redis-server') * 1000) / requests,
    postgres: (cpuSecondsSince(before.others, 'postgres') * 1000) / requests,
  });
  return result;
}

/** Creates the login accounts if this bench database lacks them, and checks that each logs in. */
async function ensureLoginAccounts(base: string, adminToken: string): Promise<void> {
  for (const account of LOGIN_ACCOUNTS) {
    const created = await call(`${base}/api/admin/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}` },
      body: { ...account, full_name: 'Bench login', role_ids: [] },
    });
    if (created.status !== 201 && created.status !== 409) {
      throw new Error(`creating ${account.email} answered ${created.status}: ${created.body.slice(0, 300)}`);
    }
    const login = await call(`${base}/api/admin/users/login`, { method: 'POST', body: account });
    if (login.status !== 200) throw new Error(`${account.email} cannot log in: ${login.status} ${login.body.slice(0, 300)}`);
  }
}
