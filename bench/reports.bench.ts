import { EVERY_CUSTOMER, scopeParams } from '../src/platform/customer-scope';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Pool } from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { ledgerInsertSql } from '../src/domain/ledger/ledger';
import { dayAfter, dayStart } from '../src/domain/reports/report-params';
import { STATEMENT_LEDGER, TRADES } from '../src/domain/reports/reports.queries';
import { withLiterals } from '../src/db/pg-connection';
import type { Statement } from '../src/platform/named-sql';
import { CHILD_EXEC_ARGV, fmt, type BatchRound, type Figure, type Harness, type Server } from './lib/harness';
import {
  BASE_DATABASE_URL,
  BENCH_ADMIN as ADMIN,
  benchPool,
  dropDatabase,
  progressOf,
  request,
  withDatabase,
} from './lib/bench-kit';

/**
 * Reports, built by the real worker tier (ROLE=worker,
 * WORKER_QUEUES=reports, compiled) on a database of this run's own:
 *
 * 1. A `trades` CSV of TRADES_ROWS closed orders (default 1,000,000): rows per second of the
 *    build (the report's started_at to finished_at: the service's own COPY of the CSV records,
 *    its record ends made CRLF, 1 MiB chunks written back to Postgres) against
 *    `COPY (<the same query>) TO STDOUT WITH CSV` of the same statement through `pg`
 *    (pg-copy-streams), read to its end. Aim: at least 0.7.
 * 2. PDF: a `trades` PDF of PDF_ROWS orders against the CSV of the same report; pages per
 *    second in its detail.
 * 3. An account statement of STATEMENT_ROWS ledger rows (default 1,000,000) as CSV against
 *    COPY of its ledger query (aim: at least 0.5), with the worker's resident set size sampled
 *    every 100 ms while it builds: the peak over its idle value is in the detail (aim: within
 *    100 MiB). It runs first, on the freshly started worker, whose idle value is then the
 *    process's own.
 *
 * The worker runs with --max-semi-space-size=16 as the docker-compose pool does
 * (BENCH_REPORT_SEMI_SPACE_MB; 0 for V8's default, which lets the young generation grow to
 * 128 MiB under a build's allocation rate: a ceiling, not growth with the report's size).
 *
 * Sizes: BENCH_REPORT_TRADES_ROWS, BENCH_REPORT_PDF_ROWS, BENCH_REPORT_STATEMENT_ROWS (10x:
 * BENCH_REPORT_STATEMENT_ROWS=10000000; the seed packs any size into the report's month);
 * rounds BENCH_REPORT_ROUNDS (default 2, each side, interleaved).
 */
const progress = progressOf('reports');
const TRADES_ROWS = Number(process.env.BENCH_REPORT_TRADES_ROWS ?? 1_000_000);
const PDF_ROWS = Number(process.env.BENCH_REPORT_PDF_ROWS ?? 20_000);
const STATEMENT_ROWS = Number(process.env.BENCH_REPORT_STATEMENT_ROWS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_REPORT_ROUNDS ?? 2);
const SEMI_SPACE_MB = Number(process.env.BENCH_REPORT_SEMI_SPACE_MB ?? 16);
const FROM = '2026-01-01';
const TO = '2026-01-31';

/** Resident set size of a process, MiB, from /proc (Linux). */
function rssMiB(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return kb ? Math.round(Number(kb) / 102.4) / 10 : NaN;
}

interface Seeded {
  token: string;
  tradesLogin: number;
  pdfLogin: number;
  statementLogin: number;
  statementAccountId: string;
}

export async function run(h: Harness): Promise<Figure[]> {
  const tag = randomBytes(4).toString('hex');
  const database = `trading_bench_reports_${tag}`;
  const env = {
    BENCH_DATABASE_URL: withDatabase(BASE_DATABASE_URL, database),
    BENCH_QUEUE_PREFIX: `bench-reports-${tag}`,
    BENCH_LOG_LEVEL: 'warn',
  };
  const pool = benchPool(env.BENCH_DATABASE_URL, 2);
  try {
    // The API creates and migrates the database; the worker starts after it.
    const api = await h.start({
      entry: 'servers/service.ts',
      name: 'api',
      execArgv: CHILD_EXEC_ARGV,
      env: { ...env, BOOTSTRAP_ADMIN_EMAIL: ADMIN.email, BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password },
    });
    // As docker-compose runs the reports pool (NODE_OPTIONS there); BENCH_REPORT_SEMI_SPACE_MB=0 runs V8's default.
    const worker = await h.startWorker(
      'worker',
      { ...env, WORKER_QUEUES: 'reports', WORKER_CONCURRENCY: '1' },
      SEMI_SPACE_MB > 0 ? [...CHILD_EXEC_ARGV, `--max-semi-space-size=${SEMI_SPACE_MB}`] : CHILD_EXEC_ARGV,
    );
    const seeded = await seed(api, pool);

    const statement = {
      type: 'account_statement',
      format: 'csv',
      params: { login: seeded.statementLogin, from: FROM, to: TO },
    };
    const statementCopy = copyStatement(
      STATEMENT_LEDGER.bind({ account_id: seeded.statementAccountId, start: dayStart(FROM), until: dayAfter(TO) }),
    );
    // A warm-up: the first day's statement (43,200 rows at the default size). The first build of a
    // process grows V8's heap to what a build's allocation rate needs (transient garbage,
    // collected later, not a leak); the figure compares the big build with that warm idle.
    const coldRss = rssMiB(worker.pid);
    const warmDay = { ...statement, params: { ...statement.params, to: FROM.replace(/01$/, '02') } };
    const { rows: warmRows } = await pool.query<{ n: number }>(
      `select count(*)::int as n from ledger_entries where account_id = $1 and created_at < $2`,
      [seeded.statementAccountId, dayAfter(warmDay.params.to)],
    );
    await build(api, pool, worker, seeded.token, warmDay, warmRows[0]!.n);
    progress(`worker RSS cold ${coldRss} MiB, after a warm-up statement ${rssMiB(worker.pid)} MiB`);
    const statementRounds: BatchRound[] = [];
    const statementBaseline: BatchRound[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      statementRounds.push(await build(api, pool, worker, seeded.token, statement, STATEMENT_ROWS));
      statementBaseline.push(await copy(pool, statementCopy, STATEMENT_ROWS));
    }
    const figures: Figure[] = [
      h.record({
        name: `statement CSV of ${STATEMENT_ROWS.toLocaleString('en-US')} ledger rows vs COPY of its ledger query (worker RSS in detail)`,
        unit: 'rows',
        size: STATEMENT_ROWS,
        connections: 1,
        candidate: statementRounds,
        baseline: statementBaseline,
      }),
    ];
    const trades = { type: 'trades', params: { from: FROM, to: TO, login: seeded.tradesLogin } };
    const tradesCopy = copyStatement(
      TRADES.bind({
        start: dayStart(FROM),
        until: dayAfter(TO),
        login: String(seeded.tradesLogin),
        symbol: null,
        ...scopeParams(EVERY_CUSTOMER),
      }),
    );
    const candidate: BatchRound[] = [];
    const baseline: BatchRound[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      candidate.push(await build(api, pool, worker, seeded.token, { ...trades, format: 'csv' }, TRADES_ROWS));
      baseline.push(await copy(pool, tradesCopy, TRADES_ROWS));
    }
    figures.push(
      h.record({
        name: `trades CSV of ${TRADES_ROWS.toLocaleString('en-US')} orders: report build vs COPY ... TO STDOUT WITH CSV`,
        unit: 'rows',
        size: TRADES_ROWS,
        connections: 1,
        candidate,
        baseline,
      }),
    );

    const pdf = { type: 'trades', params: { from: FROM, to: TO, login: seeded.pdfLogin } };
    const pdfRounds: BatchRound[] = [];
    const csvRounds: BatchRound[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      pdfRounds.push(await build(api, pool, worker, seeded.token, { ...pdf, format: 'pdf' }, PDF_ROWS));
      csvRounds.push(await build(api, pool, worker, seeded.token, { ...pdf, format: 'csv' }, PDF_ROWS));
    }
    figures.push(
      h.record({
        name: `trades PDF of ${PDF_ROWS.toLocaleString('en-US')} orders vs the CSV of the same report (pages/s in detail)`,
        unit: 'rows',
        size: PDF_ROWS,
        connections: 1,
        candidate: pdfRounds,
        baseline: csvRounds,
      }),
    );

    return figures;
  } finally {
    await pool.end().catch(() => undefined);
    await h.close();
    await dropDatabase(database).catch((err: unknown) => progress(`could not drop database ${database}: ${String(err)}`));
  }
}

/**
 * The time between two seeded rows: 2 s (43,200 rows a day) up to the size that fills the
 * report's month from its second day, closer beyond, so every row of any size is in the period.
 */
function stepOf(rows: number): string {
  const seconds = Math.min(2, (29 * 86_400) / (rows + 1));
  return `${seconds} seconds`;
}

/**
 * One customer with three accounts: closed orders for the trades CSV and the PDF, and ledger
 * rows for the statement, written with SQL as the services write them (through the API a
 * million would take hours). Bookings of the past, inside the report period.
 */
async function seed(api: Server, pool: Pool): Promise<Seeded> {
  const { access_token: token } = await request<{ access_token: string }>(api, 'POST', '/api/admin/users/login', '', ADMIN, 200);
  const as = <T>(method: string, path: string, body: unknown, status: number) =>
    request<T>(api, method, path, token, body, status);
  const group = await as<{ id: string }>('POST', '/groups', { name: `bench-reports-${Date.now()}`, default_leverage: 100 }, 201);
  const customer = await as<{ id: string }>(
    'POST',
    '/api/crm/customers',
    {
      email: `bench-reports-${Date.now()}@bench.test`,
      password: 'bench-customer-password',
      first_name: 'Bench',
      last_name: 'Reports',
    },
    201,
  );
  const open = async () => {
    const { login } = await as<{ login: number }>(
      'POST',
      `/api/crm/customers/${customer.id}/accounts`,
      { kind: 'live', group_id: group.id },
      201,
    );
    const { rows } = await pool.query<{ id: string }>('select id from accounts where login = $1', [login]);
    return { login, id: rows[0]!.id };
  };
  const [tradesAccount, pdfAccount, statementAccount] = [await open(), await open(), await open()];
  const started = Date.now();
  for (const [account, n] of [
    [tradesAccount, TRADES_ROWS],
    [pdfAccount, PDF_ROWS],
  ] as const) {
    await pool.query(
      `insert into orders (id, created_at, updated_at, account_id, login, symbol, cmd, volume, open_price, contract_size,
                           status, closed_at, close_price, profit, close_reason, comment)
       select gen_random_uuid(), t - interval '5 minutes', t, $1, $2, 'EURUSD', g % 2, 0.10, 1.08425, 100000,
              'closed', t, 1.08612, case when g % 2 = 0 then 18.70 else -18.70 end, 'manual',
              case when g % 10 = 0 then '=bench comment, with a comma' else null end
         from generate_series(1, $3::int) g,
              lateral (select timestamptz '2026-01-02' + g * $4::interval as t) x`,
      [account.id, account.login, n, stepOf(n)],
    );
  }
  // Through the ledger module's own insert (it owns the table's columns), counted rather than returned.
  const booked = ledgerInsertSql([
    {
      id: 'gen_random_uuid()',
      bookedAt: 'x.t',
      accountId: '$1::uuid',
      kind: 'trade_profit',
      amount: '1.25',
      balanceAfter: 'g * 1.25',
      referenceType: 'order',
      referenceId: 'g::text',
      comment: 'null',
      from: `generate_series(1, $2::int) g, lateral (select timestamptz '2026-01-02' + g * $3::interval as t) x`,
    },
  ]);
  await pool.query(`with booked as (${booked}) select count(*) from booked`, [
    statementAccount.id,
    STATEMENT_ROWS,
    stepOf(STATEMENT_ROWS),
  ]);
  await pool.query('update accounts set balance = $2 where id = $1', [statementAccount.id, (STATEMENT_ROWS * 1.25).toFixed(2)]);
  await pool.query('analyze orders; analyze ledger_entries');
  progress(`seeded ${TRADES_ROWS + PDF_ROWS} orders and ${STATEMENT_ROWS} ledger rows in ${Date.now() - started} ms`);
  return {
    token,
    tradesLogin: tradesAccount.login,
    pdfLogin: pdfAccount.login,
    statementLogin: statementAccount.login,
    statementAccountId: statementAccount.id,
  };
}

/** Asks for a report, samples the worker's RSS until it is finished, and times its build from the report row. */
async function build(api: Server, pool: Pool, worker: Server, token: string, body: object, rows: number): Promise<BatchRound> {
  const idle = rssMiB(worker.pid);
  let peak = idle;
  const asked = Date.now();
  const { id } = await request<{ id: string }>(api, 'POST', '/api/backoffice/reports', token, body, 202);
  let report: { status: string; rows: string; bytes: string; ms: number; error: string | null } | undefined;
  for (;;) {
    peak = Math.max(peak, rssMiB(worker.pid));
    const { rows: found } = await pool.query(
      `select status, rows, bytes, error, extract(epoch from finished_at - started_at) * 1000 as ms from reports where id = $1`,
      [id],
    );
    report = found[0];
    if (report && (report.status === 'completed' || report.status === 'failed')) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const wallMs = Date.now() - asked;
  if (report.status !== 'completed') throw new Error(`report ${id} failed: ${report.error}`);
  let pages: number | undefined;
  const detail: Record<string, unknown> = {
    format: (body as { format: string }).format,
    bytes: Number(report.bytes),
    wallMs,
    rssIdleMiB: idle,
    rssPeakMiB: peak,
    rssGrowthMiB: Math.round((peak - idle) * 10) / 10,
  };
  if ((body as { format: string }).format === 'pdf') {
    pages = await pdfPages(pool, id);
    detail.pages = pages;
    detail.pagesPerSecond = Math.round((pages / (Number(report.ms) / 1000)) * 10) / 10;
  }
  progress(
    `${(body as { type: string }).type} ${detail.format}: ${fmt(rows)} rows, ${fmt(Number(report.bytes))} bytes in ${Math.round(Number(report.ms))} ms ` +
      `(${fmt(rows / (Number(report.ms) / 1000))} rows/s${pages ? `, ${pages} pages, ${String(detail.pagesPerSecond)} pages/s` : ''}), ` +
      `worker RSS ${idle} -> peak ${peak} MiB`,
  );
  if (Number(report.rows) !== rows) throw new Error(`report ${id} has ${report.rows} rows, expected ${rows}`);
  return { ms: Number(report.ms), detail };
}

/** The page count of a stored PDF: its `/Type /Page` objects (not `/Pages`), read back chunk by chunk. */
async function pdfPages(pool: Pool, reportId: string): Promise<number> {
  let pages = 0;
  let carry = '';
  for (let seq = 0; ; seq++) {
    const { rows } = await pool.query<{ data: Buffer }>('select data from report_chunks where report_id = $1 and seq = $2', [
      reportId,
      seq,
    ]);
    if (!rows[0]) return pages;
    const text = carry + rows[0].data.toString('latin1');
    pages += (text.match(/\/Type \/Page\b(?!s)/g) ?? []).length;
    carry = text.slice(-16);
    // A match inside the carried tail was counted already: drop it from the next chunk's view.
    if (/\/Type \/Page\b/.test(carry)) carry = '';
  }
}

/** The statement as COPY runs it: the same SQL with its values written in as literals, as the service writes them. */
function copyStatement(statement: Statement): string {
  return `copy (${withLiterals(statement)}) to stdout with csv header`;
}

/** COPY ... TO STDOUT read to its end through pg (pg-copy-streams): what the database alone can do. */
async function copy(pool: Pool, text: string, rows: number): Promise<BatchRound> {
  const client = await pool.connect();
  try {
    const started = performance.now();
    const stream = client.query(copyTo(text));
    let bytes = 0;
    for await (const chunk of stream) bytes += (chunk as Buffer).length;
    const ms = performance.now() - started;
    progress(`COPY: ${fmt(rows)} rows, ${fmt(bytes)} bytes in ${Math.round(ms)} ms (${fmt(rows / (ms / 1000))} rows/s)`);
    return { ms, detail: { bytes } };
  } finally {
    client.release();
  }
}
