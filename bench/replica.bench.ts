import { Client, type Pool } from 'pg';
import { ledgerInsertSql } from '../src/domain/ledger/ledger';
import { fmt, CHILD_EXEC_ARGV, type Figure, type Harness, type Server } from './lib/harness';
import { BENCH_ADMIN as ADMIN, progressOf, request, withDatabase, ownDatabase } from './lib/bench-kit';
import { measure, type LoadResult } from './lib/load';
import { orderOf, setUp, type Holder } from './orders.bench';

/**
 * What a large statement built from the read replica costs the order path on the primary:
 * `POST /orders` (16 in flight, the orders bench's customers and orders) while the reports
 * worker builds an account statement of STATEMENT_ROWS ledger rows over and over, against the
 * same orders with no build running (aim: a ratio of at least 0.9, the build costing the order
 * path under 10 %). The build reads the replica (its rows, in one REPEATABLE READ snapshot,
 * once the replica has replayed the primary's position at its start) and writes its file to
 * the primary in 1 MiB chunks: that write, the barrier's one statement and the machine's
 * shared cores are what it can cost the orders.
 *
 * The API and the worker run with DATABASE_REPLICA_URL on BENCH_REPLICA_URL, a streaming
 * replica of the server of BENCH_DATABASE_URL; `bash scripts/replica-check.sh --run npm run
 * bench -- replica` makes one for the run. A candidate slice starts the build loop if it is not
 * running; a baseline slice stops it and waits for the build in flight to end, unmeasured, so
 * no baseline order shares the machine with a build. The builds are checked to have read the
 * replica: the rows its copy of the database returned grow by at least a statement per build.
 *
 * Sizes: BENCH_REPLICA_STATEMENT_ROWS (default 200,000: a build of several seconds, so a slice
 * of a second sees one in its streaming phase and a baseline slice does not wait long).
 */
const progress = progressOf('replica');
const STATEMENT_ROWS = Number(process.env.BENCH_REPLICA_STATEMENT_ROWS ?? 200_000);
const CONNECTIONS = 16;
const ROUNDS = 5;
const FROM = '2026-01-01';
const TO = '2026-01-31';

export async function run(h: Harness): Promise<Figure[]> {
  const replicaServer = process.env.BENCH_REPLICA_URL;
  if (!replicaServer)
    throw new Error(
      'BENCH_REPLICA_URL must name a streaming replica of the bench server: bash scripts/replica-check.sh --run npm run bench -- replica',
    );
  const own = ownDatabase('replica', 4);
  const { tag, pool } = own;
  const replica = { DATABASE_REPLICA_URL: withDatabase(replicaServer, own.database) };
  const env = { ...own.env, ...replica };
  const builds = new BuildLoop(pool);
  try {
    const api = await h.start({
      entry: 'servers/service.ts',
      name: 'api',
      execArgv: CHILD_EXEC_ARGV,
      env: { ...own.apiEnv, ...replica },
    });
    await h.startWorker('worker', { ...env, WORKER_QUEUES: 'reports', WORKER_CONCURRENCY: '1' });
    const holders = await setUp(api, pool, tag);
    builds.token = (await request<{ access_token: string }>(api, 'POST', '/api/admin/users/login', '', ADMIN, 200)).access_token;
    builds.api = api;
    builds.login = await seedStatement(pool, holders[0]!);
    await replicaHas(env.DATABASE_REPLICA_URL);
    const returnedBefore = await replicaRowsReturned(env.DATABASE_REPLICA_URL);

    const url = api.url('/orders');
    const target = {
      url,
      method: 'POST',
      headers: (seq: number) => ({ authorization: `Bearer ${orderOf(holders, seq).holder.token}` }),
      body: (seq: number) => orderOf(holders, seq).order as unknown as Record<string, unknown>,
    };
    const reset = () =>
      pool.query(`delete from orders where status = 'open'; delete from domain_events where type = 'order.opened'`);
    const figure = await h.compareRuns({
      name: `POST /orders rps while a ${fmt(STATEMENT_ROWS)}-row statement is built from the read replica vs with no build, ${CONNECTIONS} in flight`,
      connections: CONNECTIONS,
      rounds: ROUNDS,
      candidate: async (window): Promise<LoadResult> => {
        builds.start();
        await reset();
        return measure({ ...target, ...window });
      },
      baseline: async (window): Promise<LoadResult> => {
        await builds.stop();
        await reset();
        return measure({ ...target, ...window });
      },
    });
    await builds.stop();
    // Sessions report their counts to the statistics within a second or so of a transaction's end.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const returned = (await replicaRowsReturned(env.DATABASE_REPLICA_URL)) - returnedBefore;
    progress(`${builds.done} statements built during the candidate's slices; the replica returned ${fmt(returned)} rows`);
    if (builds.done === 0) throw new Error('no statement was built: the figure compares nothing');
    if (returned < builds.done * STATEMENT_ROWS)
      throw new Error(`the replica returned ${returned} rows for ${builds.done} statements: the builds read the primary`);
    return [figure];
  } finally {
    await builds.stop().catch(() => undefined);
    await h.close();
    await own.close();
  }
}

/** Statements asked for one after another, each as soon as the last one finished, until stopped. */
class BuildLoop {
  api!: Server;
  token = '';
  login = 0;
  done = 0;
  private running: Promise<void> | undefined;
  private stopping = false;

  constructor(private readonly pool: Pool) {}

  start(): void {
    if (this.running) return;
    this.stopping = false;
    this.running = (async () => {
      while (!this.stopping) {
        const { id } = await request<{ id: string }>(
          this.api,
          'POST',
          '/api/backoffice/reports',
          this.token,
          { type: 'account_statement', format: 'csv', params: { login: this.login, from: FROM, to: TO } },
          202,
        );
        for (;;) {
          const { rows } = await this.pool.query<{ status: string; error: string | null }>(
            'select status, error from reports where id = $1',
            [id],
          );
          if (rows[0]?.status === 'failed') throw new Error(`statement ${id} failed: ${rows[0].error}`);
          if (rows[0]?.status === 'completed') break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        this.done++;
      }
    })();
  }

  /** Stops asking for more and waits for the build in flight to end. */
  async stop(): Promise<void> {
    this.stopping = true;
    const running = this.running;
    this.running = undefined;
    await running;
  }
}

/** STATEMENT_ROWS ledger rows in January on the first holder's account, through the ledger's own insert. */
async function seedStatement(pool: Pool, holder: Holder): Promise<number> {
  const started = Date.now();
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
      from: `generate_series(1, $2::int) g, lateral (select timestamptz '2026-01-02' + (g * interval '1 second') as t) x`,
    },
  ]);
  await pool.query(`with booked as (${booked}) select count(*) from booked`, [holder.account.id, STATEMENT_ROWS]);
  await pool.query('analyze ledger_entries');
  progress(`seeded ${fmt(STATEMENT_ROWS)} ledger rows in ${Date.now() - started} ms`);
  return Number(holder.account.login);
}

/** Waits until the replica has the bench's database (its creation replayed). */
async function replicaHas(url: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const client = new Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw new Error(`the replica has no database at ${new URL(url).pathname}`, { cause: err });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Rows the replica's copy of the database has returned to its sessions, as its statistics count them. */
async function replicaRowsReturned(url: string): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      'select tup_returned + tup_fetched as n from pg_stat_database where datname = current_database()',
    );
    return Number(rows[0]!.n);
  } finally {
    await client.end();
  }
}
