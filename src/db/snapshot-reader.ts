import type { EntityManager } from '@mikro-orm/postgresql';
import QueryStream from 'pg-query-stream';
import { pgPlaceholders, type Statement } from '../platform/named-sql';

/** What this module needs of knex's client: its pool, whose connections are pg clients. */
interface PooledClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: unknown): Promise<void>;
}

interface PgConnection {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
  query<T>(stream: QueryStream): QueryStream & AsyncIterable<T>;
}

/** Rows a cursor fetches per round trip: enough to keep the pipe full, few enough that memory stays flat. */
const CURSOR_BATCH = 2000;

/**
 * Reads for one report on one connection of the ORM's pool, inside a read-only REPEATABLE
 * READ transaction: every statement sees the same snapshot, so a statement's opening
 * balance, its rows and its closing balance agree even while bookings go on. Large results
 * come through a server-side cursor (pg-query-stream), a batch at a time, so memory does not
 * grow with the size of the report.
 */
export class SnapshotReader {
  private constructor(
    private readonly client: PooledClient,
    private readonly connection: PgConnection,
  ) {}

  static async open(em: EntityManager): Promise<SnapshotReader> {
    const client = em.getConnection().getKnex().client as unknown as PooledClient;
    const connection = await client.acquireConnection();
    try {
      await connection.query('begin isolation level repeatable read read only');
    } catch (err) {
      await client.releaseConnection(connection);
      throw err;
    }
    return new SnapshotReader(client, connection);
  }

  async all<T>({ sql, values }: Statement): Promise<T[]> {
    return (await this.connection.query(pgPlaceholders(sql), values)).rows as T[];
  }

  async one<T>(statement: Statement): Promise<T | undefined> {
    return (await this.all<T>(statement))[0];
  }

  /**
   * The rows one at a time; the next statement may run once this one is consumed to its end.
   * Leaving the loop early destroys the stream, which closes its cursor.
   */
  stream<T>({ sql, values }: Statement): AsyncIterable<T> {
    return this.connection.query<T>(new QueryStream(pgPlaceholders(sql), values, { batchSize: CURSOR_BATCH }));
  }

  /** Ends the snapshot and hands the connection back; after an error the rollback may fail with it, which is fine. */
  async close(): Promise<void> {
    try {
      await this.connection.query('rollback');
    } catch {
      // The connection is broken: the pool discards it when it is released.
    } finally {
      await this.client.releaseConnection(this.connection);
    }
  }
}
