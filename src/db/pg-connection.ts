import type { EntityManager } from '@mikro-orm/postgresql';
import { CompiledQuery } from 'kysely';
import type { Readable } from 'node:stream';
import { escapeLiteral, type PoolClient } from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { pgPlaceholders, type Statement } from '../platform/named-sql';
import { rewriteSqlCode } from '../platform/sql-scanner';

/**
 * The one place where SQL reaches `pg` under the ORM without going through `em.execute`, and
 * it does so through MikroORM's public API only: the connection's `pg` pool
 * (`getNativeClient()`) for a connection of our own, and `em.getKysely()`, which inside
 * `em.transactional` is bound to that transaction's connection. Nothing here reads the ORM's
 * or its query runner's private state, so an ORM upgrade that keeps those two methods keeps
 * this working. Every statement goes out with its values as parameters (pg's extended
 * protocol): em.execute quotes them into the SQL text instead, which costs CPU on the hot
 * paths, doubles a binary value's size, and is never needed to keep a value from being read
 * as SQL.
 */

/** A connection of the ORM's pool, held by the caller until it hands it back. */
export interface HeldConnection {
  readonly client: PoolClient;
  /** Runs one statement; answers its rows. */
  rows<T>(statement: Statement): Promise<T[]>;
  /**
   * `COPY (statement) TO STDOUT` as CSV (UTF-8, no header, LF after each record, NULL as an
   * empty unquoted field): Postgres writes the text, read as it streams (pg-copy-streams).
   * The stream must be read to its end before the connection runs anything else.
   */
  copyCsv(statement: Statement): Readable;
  /** Hands the connection back to the pool; `broken` closes it instead (a failed rollback). */
  release(broken?: boolean): void;
}

export async function holdConnection(em: EntityManager): Promise<HeldConnection> {
  const pool = await em.getConnection().getNativeClient();
  const client = await pool.connect();
  let released = false;
  return {
    client,
    rows: async <T>({ sql, values }: Statement) => (await client.query(pgPlaceholders(sql), values)).rows as T[],
    copyCsv: (statement) =>
      client.query(copyTo(`copy (${withLiterals(statement)}) to stdout with (format csv, encoding 'UTF8')`)),
    release: (broken = false) => {
      if (released) return;
      released = true;
      client.release(broken);
    },
  };
}

/**
 * Runs one statement in the transaction `em` is in (em.transactional), on that transaction's
 * connection. A value is one parameter: an array is a Postgres array, never spread into an
 * IN list as em.execute spreads it.
 */
export async function rowsInTransaction<T>(em: EntityManager, { sql, values }: Statement): Promise<T[]> {
  if (!em.isInTransaction()) throw new Error('rowsInTransaction needs a transaction');
  const result = await em.getKysely().executeQuery(CompiledQuery.raw(pgPlaceholders(sql), values));
  return result.rows as T[];
}

/**
 * The statement with its values written in as quoted literals: COPY takes no parameters. Each
 * value is a string constant (pg's escapeLiteral), which Postgres types from its context as it
 * types a parameter sent as text (`:login::bigint`, `created_at < :until`), so the statement
 * means what it means with parameters, and no value is ever read as SQL.
 */
export function withLiterals({ sql, values }: Statement): string {
  let n = 0;
  return rewriteSqlCode(sql, (code) => code.replace(/\?/g, () => literal(values[n++])));
}

function literal(value: unknown): string {
  if (value === null) return 'null';
  if (value instanceof Date) return escapeLiteral(value.toISOString());
  if (typeof value === 'string') return escapeLiteral(value);
  if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'bigint' || typeof value === 'boolean')
    return escapeLiteral(String(value));
  throw new Error(`no literal form for a value of type ${typeof value}`);
}
