import { Client } from 'pg';
import {
  DefaultLogger,
  MikroORM,
  type LogContext,
  type LoggerNamespace,
  type LoggerOptions,
  type Options,
} from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { ormConfig } from './orm-config';

/** The database named in `url` and a URL for the `postgres` maintenance database beside it. */
export function splitDatabaseUrl(url: string): { name: string; adminUrl: string } {
  const parsed = new URL(url);
  const name = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || 'postgres';
  parsed.pathname = '/postgres';
  return { name, adminUrl: parsed.toString() };
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Creates the database if it does not exist; two processes starting at once both succeed. */
export async function ensureDatabase(url: string, logger?: Logger): Promise<void> {
  const { name, adminUrl } = splitDatabaseUrl(url);
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return;
    try {
      await client.query(`CREATE DATABASE ${quoteIdent(name)}`);
      logger?.info({ database: name }, 'database created');
    } catch (err) {
      // 42P04 duplicate_database / 23505: another process created it between our check and create.
      const code = (err as { code?: string }).code;
      if (code !== '42P04' && code !== '23505') throw err;
    }
  } finally {
    await client.end();
  }
}

/** Arbitrary constant: the advisory lock that serialises migrations across processes. */
const MIGRATION_LOCK_KEY = 7_406_611_211;

/**
 * Runs pending migrations under a Postgres advisory lock, so an api and several workers
 * starting together migrate once and the others wait for it.
 */
export async function runMigrations(url: string, logger?: Logger): Promise<string[]> {
  const lock = new Client({ connectionString: url });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const orm = await MikroORM.init(ormConfig(url));
    try {
      const applied = await orm.migrator.up();
      if (applied.length) logger?.info({ migrations: applied.map((m) => m.name) }, 'migrations applied');
      return applied.map((m) => m.name);
    } finally {
      await orm.close(true);
    }
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await lock.end();
  }
}

/**
 * MikroORM's own logger, except that its warnings and errors (the pool's report of a connection
 * the server dropped, which would otherwise be printed or lost) go to the structured log.
 */
class StructuredOrmLogger extends DefaultLogger {
  constructor(
    options: LoggerOptions,
    private readonly logger: Logger,
  ) {
    super(options);
  }

  override log(namespace: LoggerNamespace, message: string, context?: LogContext): void {
    if (context?.level === 'error' || context?.level === 'warning') {
      this.logger[context.level === 'error' ? 'error' : 'warn'](
        { source: 'mikro-orm', namespace, detail: message },
        'database driver',
      );
      return;
    }
    super.log(namespace, message, context);
  }
}

/** The ORM of a running process. */
export async function openOrm(url: string, logger?: Logger, overrides: Options = {}): Promise<MikroORM> {
  return MikroORM.init(
    ormConfig(url, { ...(logger ? { loggerFactory: (options) => new StructuredOrmLogger(options, logger) } : {}), ...overrides }),
  );
}

/**
 * The ORM of the read replica: the same entities on DATABASE_REPLICA_URL. Nothing connects
 * until the first read, so a replica that is down at start delays nothing; a connection
 * attempt that hangs (a host gone from the network) gives up after 2 s, and the read goes to
 * the primary.
 */
export function openReplicaOrm(url: string, logger?: Logger): Promise<MikroORM> {
  // A context name of its own: MikroORM hands every call on an EntityManager to the one bound to
  // the running job or request under the same name, which would be the primary's.
  return openOrm(url, logger, { contextName: 'replica', driverOptions: { connectionTimeoutMillis: 2000 } });
}
