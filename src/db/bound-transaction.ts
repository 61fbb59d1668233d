import type { EntityManager } from '@mikro-orm/postgresql';
import type { Statement } from '../platform/named-sql';
import { holdConnection } from './pg-connection';

/** Runs one statement of a bound transaction, its values sent as parameters; answers its rows. */
export type RunBound = <T>(statement: Statement) => Promise<T[]>;

/**
 * A transaction on a connection of the ORM's own pool whose statements `pg` sends with their
 * values as parameters, and nothing of the ORM in between: for the hottest writes, whose
 * statements are already one round trip each, and where MikroORM's transaction wrapper (a
 * fork, the query runner's transaction for BEGIN and COMMIT, the flush at commit) cost the
 * API more CPU than the statements themselves. No entity is read or written here, so there is
 * no unit of work to flush. `work` commits when it returns (a transaction that wrote nothing
 * commits as nothing) and rolls back when it throws.
 */
export async function boundTransaction<T>(em: EntityManager, work: (run: RunBound) => Promise<T>): Promise<T> {
  const connection = await holdConnection(em);
  let broken = false;
  try {
    await connection.client.query('begin');
    const result = await work(connection.rows);
    await connection.client.query('commit');
    return result;
  } catch (err) {
    // A connection that cannot roll back is broken: it is closed, not handed back to the pool.
    await connection.client.query('rollback').catch(() => {
      broken = true;
    });
    throw err;
  } finally {
    connection.release(broken);
  }
}
