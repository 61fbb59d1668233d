import { createHash, randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { quoteIdent, splitDatabaseUrl } from '../../src/db/database';
import { MIGRATIONS } from '../../src/db/migrations';

/** Where tests find Postgres; every test database lives beside this one. */
export const TEST_SERVER_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * The template is named after the migrations it holds, so concurrent test runs (of this
 * checkout or another) share it when they agree and never drop one another's.
 */
export const TEMPLATE_DATABASE = `tt_${createHash('sha1')
  .update(MIGRATIONS.map((m) => m.name).join(','))
  .digest('hex')
  .slice(0, 12)}`;

/** Set by the global setup: every database of one run carries it, and the teardown drops them. */
export function runId(): string {
  return process.env.TEST_RUN_ID ?? 'adhoc';
}

/**
 * Where the service under test connects: the server itself, or a connection pooler in front
 * of it (TEST_DATABASE_APP_URL, e.g. PgBouncer in transaction mode: scripts/cluster-check.sh).
 * Databases are created and dropped through the server directly either way.
 */
const APP_SERVER_URL = process.env.TEST_DATABASE_APP_URL ?? TEST_SERVER_URL;

export function databaseUrl(name: string): string {
  const url = new URL(APP_SERVER_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The same database, reached without a pooler: for migrations and for what needs a session. */
export function directDatabaseUrl(name: string): string {
  const url = new URL(TEST_SERVER_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * A streaming replica of the test server (TEST_DATABASE_REPLICA_URL, started by
 * scripts/replica-check.sh): every test database exists there too, once it has replayed the
 * clone, and the service under test reads its heavy reads from it.
 */
export const TEST_REPLICA_URL = process.env.TEST_DATABASE_REPLICA_URL;

export function replicaDatabaseUrl(name: string): string | undefined {
  if (!TEST_REPLICA_URL) return undefined;
  const url = new URL(TEST_REPLICA_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Waits until the replica has replayed the database's creation, so the service's first read finds it there. */
export async function replicaHasDatabase(name: string, timeoutMs = 15_000): Promise<void> {
  const url = replicaDatabaseUrl(name);
  if (!url) return;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw new Error(`the replica has no database ${name} after ${timeoutMs} ms`, { cause: err });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

export async function withAdmin<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: splitDatabaseUrl(TEST_SERVER_URL).adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * A fresh database cloned from the migrated template: a file copy, far faster than
 * migrating. Postgres refuses two clones of one template at the same instant, so clones
 * retry briefly.
 */
export async function cloneTemplateDatabase(label: string): Promise<string> {
  const name = `t_${runId()}_${label
    .replace(/[^a-z0-9]/gi, '_')
    .toLowerCase()
    .slice(0, 24)}_${randomBytes(3).toString('hex')}`;
  await withAdmin(async (client) => {
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE ${quoteIdent(name)} TEMPLATE ${quoteIdent(TEMPLATE_DATABASE)}`);
        return;
      } catch (err) {
        const busy = /being accessed by other users/.test((err as Error).message);
        if (!busy || attempt >= 50) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 100));
      }
    }
  });
  return name;
}

export async function dropDatabase(name: string): Promise<void> {
  await withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
}
