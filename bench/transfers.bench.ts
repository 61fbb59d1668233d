import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Pool } from 'pg';
import { transferBooking, transferStatements } from '../src/domain/money/transfers';
import { D, money } from '../src/platform/decimal';
import { pgPlaceholders } from '../src/platform/named-sql';
import { cpuSecondsByName, cpuSecondsSince, machineCpu, processCpuSeconds } from './lib/cpu';
import { CHILD_EXEC_ARGV, fmt, type Figure, type Harness, type RunWindow, type Server } from './lib/harness';
import {
  BASE_DATABASE_URL,
  BENCH_ADMIN as ADMIN,
  benchCustomer,
  benchPool,
  dropDatabase,
  measureLoop,
  median,
  progressOf,
  request,
  withDatabase,
} from './lib/bench-kit';
import { call, measure, nextSeq, type LoadResult } from './lib/load';

/**
 * POST /customers/me/transfer, the hot path of money movement: transfers per second through
 * the whole service (auth, validation, the caller's accounts, the transaction that locks both
 * rows in id order, checks the funds and books both legs, the record and the event in one
 * statement) against the same SQL transaction sent straight to Postgres through `pg` from this
 * process, with as many transfers in flight on each side (aim: a ratio of at least 0.5). The
 * baseline sends the very statements the service does, built by the same transferStatements
 * and transferBooking: begin, find and lock the caller's two accounts, look for open orders on
 * a live source, book, commit. Its pool has the service's size (10).
 *
 * CUSTOMERS customers each hold a USD wallet and a USD live account, funded far beyond what the
 * run moves; request n is customer n mod CUSTOMERS, wallet to live or back by turns, 1.00 at a
 * time: every pair sees transfers both ways at once, as in the race tests. The service runs as
 * in production (ROLE=api, compiled, LOG_LEVEL silent) on a database of this run's own, dropped
 * at the end. The figure also gives the p99 latency of a transfer on each side under that load.
 */
const progress = progressOf('transfers');
const CUSTOMERS = 16;
const CONNECTIONS = 16;
/** A round's ratio moves by ±15 % with the host here; nine of them hold the median to a few percent. */
const ROUNDS = 9;
const POOL_SIZE = 10;
/** Extra node flags for the service, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to see where its time goes. */

interface Holder {
  customerId: string;
  token: string;
  wallet: { id: string; login: string };
  live: { id: string; login: string };
}

export async function run(h: Harness): Promise<Figure[]> {
  const tag = randomBytes(4).toString('hex');
  const database = `trading_bench_transfer_${tag}`;
  const databaseUrl = withDatabase(BASE_DATABASE_URL, database);
  const pool = benchPool(databaseUrl, POOL_SIZE);
  let api: Server | undefined;
  try {
    api = await h.start({
      entry: 'servers/service.ts',
      name: 'api',
      execArgv: CHILD_EXEC_ARGV,
      env: {
        BENCH_DATABASE_URL: databaseUrl,
        BENCH_QUEUE_PREFIX: `bench-transfer-${tag}`,
        BOOTSTRAP_ADMIN_EMAIL: ADMIN.email,
        BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
      },
    });
    const holders = await setUp(api, pool, tag);
    const route = (seq: number) => {
      const holder = holders[seq % CUSTOMERS]!;
      const outbound = Math.floor(seq / CUSTOMERS) % 2 === 0;
      return { holder, from: outbound ? holder.wallet : holder.live, to: outbound ? holder.live : holder.wallet };
    };

    const url = api.url('/customers/me/transfer');
    const target = {
      url,
      method: 'POST',
      headers: (seq: number) => ({ authorization: `Bearer ${route(seq).holder.token}` }),
      body: (seq: number) => {
        const { from, to } = route(seq);
        return { from_login: Number(from.login), to_login: Number(to.login), amount: 1 };
      },
    };
    const seq = nextSeq();
    const check = await call(url, { method: 'POST', headers: target.headers(seq), body: target.body(seq) });
    if (check.status !== 200) throw new Error(`a transfer answered ${check.status}: ${check.body.slice(0, 300)}`);

    const service = api;
    const cpu = { candidate: [] as CpuShare[], baseline: [] as CpuShare[] };
    const figure = await h.compareRuns({
      name: `POST /customers/me/transfer rps vs the same transaction via pg, ${CONNECTIONS} in flight`,
      connections: CONNECTIONS,
      rounds: ROUNDS,
      candidate: (window) => withCpu(cpu.candidate, window, service.pid, () => measure({ ...target, ...window })),
      baseline: (window) => withCpu(cpu.baseline, window, process.pid, () => plainTransfers(pool, holders, window)),
    });
    await checkBooks(pool);
    const per = (shares: CpuShare[], key: keyof CpuShare) => fmt(median(shares.map((c) => c[key])), 2);
    process.stderr.write(
      `  transfers: p99 of a transfer under this load: ${fmt(figure.candidateP99Ms, 1)} ms through the API, ` +
        `${fmt(figure.baselineP99Ms, 1)} ms straight through pg\n` +
        `  transfers: CPU ms per transfer (medians): the service process ${per(cpu.candidate, 'client')}, ` +
        `the pg baseline process ${per(cpu.baseline, 'client')}; Postgres ${per(cpu.candidate, 'postgres')} and ` +
        `${per(cpu.baseline, 'postgres')}; other processes used ${per(cpu.candidate, 'othersShare')} and ` +
        `${per(cpu.baseline, 'othersShare')} of the machine\n`,
    );
    return [figure];
  } finally {
    await api?.stop();
    await pool.end().catch(() => undefined);
    await dropDatabase(database).catch((err: unknown) => progress(`could not drop database ${database}: ${String(err)}`));
  }
}

interface CpuShare {
  /** CPU ms per transfer of the process doing the transfers' client side: the service, or this process for pg. */
  client: number;
  /** CPU ms per transfer of every Postgres process. */
  postgres: number;
  /** Share of the machine's CPU that neither used (other engineers' work on a shared machine). */
  othersShare: number;
}

/** Runs one side and notes where the CPU went, per transfer, over the whole round (warm-up included). */
async function withCpu(into: CpuShare[], window: RunWindow, pid: number, side: () => Promise<LoadResult>): Promise<LoadResult> {
  const before = {
    client: processCpuSeconds(pid) ?? NaN,
    postgres: cpuSecondsByName(['postgres']),
    machine: machineCpu()?.busy ?? NaN,
  };
  const started = performance.now();
  const result = await side();
  const seconds = (performance.now() - started) / 1000;
  const transfers = result.rps * ((window.durationMs + window.warmupMs) / 1000);
  const client = (processCpuSeconds(pid) ?? NaN) - before.client;
  const pg = cpuSecondsSince(before.postgres, 'postgres');
  const machine = (machineCpu()?.busy ?? NaN) - before.machine;
  const cores = os.cpus().length;
  into.push({
    client: (client * 1000) / transfers,
    postgres: (pg * 1000) / transfers,
    othersShare: Math.max(0, machine - client - pg - (pid === process.pid ? 0 : result.loadCpu * seconds)) / (cores * seconds),
  });
  return result;
}

/**
 * The baseline: a closed loop of `connections` workers, each sending one transfer's statements
 * and waiting for the commit before the next, as the load generator waits for each answer.
 */
async function plainTransfers(pool: Pool, holders: Holder[], window: RunWindow): Promise<LoadResult> {
  return measureLoop(
    window,
    (seq) => {
      const holder = holders[seq % CUSTOMERS]!;
      const outbound = Math.floor(seq / CUSTOMERS) % 2 === 0;
      return plainTransfer(pool, holder, outbound ? holder.wallet : holder.live, outbound ? holder.live : holder.wallet);
    },
    progress,
  );
}

/** One transfer as transferFunds sends it, identity conversion (both accounts USD), through plain `pg`. */
async function plainTransfer(
  pool: Pool,
  holder: Holder,
  from: { id: string; login: string },
  to: { id: string; login: string },
): Promise<void> {
  const amount = money(1);
  const client = await pool.connect();
  try {
    await client.query('begin');
    const lock = transferStatements.lockOwnPair(holder.customerId, from.login, to.login);
    const locked = await client.query<{
      id: string;
      login: string;
      kind: string;
      currency: string;
      balance: string;
      reserved: string;
    }>(pgPlaceholders(lock.sql), lock.values);
    const source = locked.rows.find((r) => r.login === from.login)!;
    const target = locked.rows.find((r) => r.login === to.login)!;
    if (source.kind !== 'wallet') {
      const open = transferStatements.hasOpenOrders(source.id);
      await client.query(pgPlaceholders(open.sql), open.values);
    }
    if (amount.gt(new D(source.balance).minus(source.reserved))) throw new Error('not enough funds');
    const { params } = transferBooking({
      customerId: holder.customerId,
      from: source,
      to: target,
      amount,
      converted: amount,
      rate: { multiplier: new D(1), divisor: new D(1), source: 'identity' },
      bookedAt: new Date(),
    });
    const book = transferStatements.book(params);
    await client.query(pgPlaceholders(book.sql), book.values);
    await client.query('commit');
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

// ---------------------------------------------------------------------------------------------
// Setup, through the API as a broker would do it

async function setUp(api: Server, pool: Pool, tag: string): Promise<Holder[]> {
  const admin = (await request<{ access_token: string }>(api, 'POST', '/api/admin/users/login', '', ADMIN, 200)).access_token;
  const group = await request<{ id: string }>(api, 'POST', '/groups', admin, { name: `bench-transfers-${tag}` }, 201);
  const holders: Holder[] = [];
  for (let i = 0; i < CUSTOMERS; i++) {
    const { customerId, liveLogin, token } = await benchCustomer(api, admin, {
      email: `bench-transfer-${tag}-${i}@bench.test`,
      lastName: `Customer ${i}`,
      groupId: group.id,
    });
    const accounts = await pool.query<{ id: string; login: string; kind: string }>(
      'select id, login::text as login, kind from accounts where customer_id = $1',
      [customerId],
    );
    const wallet = accounts.rows.find((a) => a.kind === 'wallet')!;
    for (const login of [wallet.login, String(liveLogin)])
      await request(api, 'POST', `/api/backoffice/accounts/${login}/deposits`, admin, { amount: 1_000_000_000 }, 201);
    holders.push({
      customerId,
      token,
      wallet: { id: wallet.id, login: wallet.login },
      live: { id: accounts.rows.find((a) => a.login === String(liveLogin))!.id, login: String(liveLogin) },
    });
  }
  progress(`${CUSTOMERS} customers, each with a funded wallet and live account`);
  return holders;
}

/** Both sides booked through the same statements: the ledger must balance and every transfer have two legs. */
async function checkBooks(pool: Pool): Promise<void> {
  const mismatches = await pool.query(
    `select a.login from accounts a left join ledger_entries l on l.account_id = a.id
      group by a.id having a.balance <> coalesce(sum(l.amount), 0)`,
  );
  const transfers = await pool.query<{ n: string; legs: string }>(
    `select (select count(*) from transfers)::text as n,
            (select count(*) from ledger_entries where reference_type = 'transfer')::text as legs`,
  );
  const { n, legs } = transfers.rows[0]!;
  if (mismatches.rowCount || Number(legs) !== 2 * Number(n))
    throw new Error(`books do not balance: ${mismatches.rowCount} accounts off their ledger, ${n} transfers with ${legs} legs`);
  progress(`books balance: ${fmt(Number(n))} transfers, ${fmt(Number(legs))} legs`);
}
