import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import QueryStream from 'pg-query-stream';
import { pgPlaceholders, type Statement } from '../platform/named-sql';
import { holdConnection, type HeldConnection } from './pg-connection';

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
  /** A COPY not read to its end: the connection is still in COPY mode and cannot run a rollback. */
  private copying = false;

  private constructor(private readonly connection: HeldConnection) {}

  static async open(em: EntityManager): Promise<SnapshotReader> {
    const connection = await holdConnection(em);
    try {
      await connection.client.query('begin isolation level repeatable read read only');
    } catch (err) {
      connection.release(true);
      throw err;
    }
    return new SnapshotReader(connection);
  }

  async all<T>(statement: Statement): Promise<T[]> {
    return this.connection.rows<T>(statement);
  }

  async one<T>(statement: Statement): Promise<T | undefined> {
    return (await this.all<T>(statement))[0];
  }

  /**
   * The rows one at a time; the next statement may run once this one is consumed to its end.
   * Leaving the loop early destroys the stream, which closes its cursor.
   */
  stream<T>({ sql, values }: Statement): AsyncIterable<T> {
    return this.connection.client.query(new QueryStream(pgPlaceholders(sql), values, { batchSize: CURSOR_BATCH }));
  }

  /**
   * The statement's rows as CSV records written by Postgres (`COPY ... TO STDOUT`, see
   * HeldConnection.copyCsv), in the same snapshot; the next statement may run once it ends.
   */
  copyCsv(statement: Statement): Readable {
    const stream = this.connection.copyCsv(statement);
    this.copying = true;
    finished(stream).then(
      () => (this.copying = false),
      () => undefined,
    );
    return stream;
  }

  /** Ends the snapshot and hands the connection back; after an error the rollback may fail with it, which is fine. */
  async close(): Promise<void> {
    if (this.copying) {
      // Left in the middle of a COPY: closing the connection ends the COPY and the snapshot.
      this.connection.release(true);
      return;
    }
    let broken = false;
    try {
      await this.connection.client.query('rollback');
    } catch {
      // The connection is broken: it is closed, not handed back to the pool.
      broken = true;
    } finally {
      this.connection.release(broken);
    }
  }
}
