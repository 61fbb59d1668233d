import { BENCH_ADMIN as ADMIN } from './lib/bench-kit';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { Figure, Harness } from './lib/harness';
import { call } from './lib/load';

/**
 * The bench admin, shared with auth.bench.ts: the bootstrap admin is created only in a
 * database without staff users, so whichever bench runs first on a fresh bench database
 * creates it and the others log in with the same credentials.
 */
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/trading_bench';

/**
 * POST /groups: the whole service (auth, zod validation, unit of work, audit row in the same
 * transaction, view) against a bare express handler that inserts the same row with one `pg`
 * query into the same database. Names are unique per request (run id + sequence number), so
 * every request is a real insert on both sides. Aim: a ratio of at least 0.6.
 */
export async function run(h: Harness): Promise<Figure[]> {
  // The service first: it creates and migrates the bench database the bare server writes to.
  const service = await h.start({
    entry: 'servers/service.ts',
    env: { BOOTSTRAP_ADMIN_EMAIL: ADMIN.email, BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password },
  });
  const bare = await h.start({ entry: 'servers/bare-groups.ts' });

  const login = await call(service.url('/api/admin/users/login'), { method: 'POST', body: ADMIN });
  if (login.status !== 200) {
    throw new Error(
      `bench admin login answered ${login.status}: ${login.body.slice(0, 300)} ` +
        `(the bench database has staff users but not ${ADMIN.email}: drop it to start afresh)`,
    );
  }
  const pair = JSON.parse(login.body) as { access_token: string; expires_in: number };
  if (pair.expires_in < 120)
    throw new Error(`access tokens live ${pair.expires_in} s in the bench database: too short to measure`);

  const runId = randomBytes(4).toString('hex');
  const prefix = `bench-${runId}-`;
  const body = (seq: number) => ({ name: `${prefix}${seq}`, description: 'bench group' });
  try {
    return [
      await h.compare({
        name: 'POST /groups rps, service vs bare express + pg insert',
        candidate: {
          url: service.url('/groups'),
          method: 'POST',
          headers: { authorization: `Bearer ${pair.access_token}` },
          body,
        },
        baseline: { url: bare.url('/groups'), method: 'POST', body },
        connections: 32,
      }),
    ];
  } finally {
    await removeRun(prefix);
  }
}

/** The bench database keeps no rows of a finished run: its groups (and their audit rows) would only slow the next one. */
async function removeRun(prefix: string): Promise<void> {
  const client = new Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    const like = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const audit = await client.query(
      `delete from audit_entries where entity_type = 'group'
         and entity_id in (select id::text from trading_groups where name like $1)`,
      [like],
    );
    const groups = await client.query('delete from trading_groups where name like $1', [like]);
    process.stderr.write(`  removed ${groups.rowCount} bench groups and ${audit.rowCount} audit rows\n`);
  } finally {
    await client.end();
  }
}
