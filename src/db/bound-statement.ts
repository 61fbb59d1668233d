import type { EntityManager } from '@mikro-orm/postgresql';
import type { Statement } from '../platform/named-sql';
import { holdConnection, rowsInTransaction } from './pg-connection';

/**
 * Runs one statement on a connection of the ORM's own pool with its values sent as
 * parameters (pg's extended protocol), returning its rows.
 *
 * Used where a statement runs once per ticket or per answer (bulk close's per-ticket read and
 * close, order close, a run's tickets and items): em.execute quotes every value into the SQL
 * text (MikroORM's formatQuery) and runs the result through the ORM's raw-query machinery,
 * which on a closing statement that carries its event's JSON costs the worker more than
 * sending the statement. Parameters also keep a value from ever being read as SQL. Outside a
 * transaction the statement is its own implicit transaction; inside one (em.transactional) it
 * runs on the transaction's connection.
 */
export async function executeBound<T>(em: EntityManager, statement: Statement): Promise<T[]> {
  if (em.isInTransaction()) return rowsInTransaction<T>(em, statement);
  const connection = await holdConnection(em);
  try {
    return await connection.rows<T>(statement);
  } finally {
    connection.release();
  }
}

/**
 * Runs a named statement through the unit of work's connection (`em.execute`), in its
 * transaction when there is one: the form for statements off the hot paths. Rows for a
 * SELECT or a RETURNING; what else a statement answers is not used.
 */
export function executeNamed<T>(em: EntityManager, { sql, values }: Statement): Promise<T[]> {
  return em.execute<T[]>(sql, values);
}

/**
 * Runs one statement with its values sent as parameters, in the unit of work's transaction,
 * on the transaction's own connection: for statements that carry large binary values (a
 * document's sealed file; em.execute would quote a 10 MiB buffer into the SQL text as a hex
 * literal, twice its size, built and then parsed again by Postgres), and for the statements of
 * a hot transaction (a transfer, a market order), where em.execute's quoting costs the API
 * more CPU per statement than `pg` sending it. Must be called inside em.transactional. A value
 * is one parameter: an array is a Postgres array, never spread into an IN list as em.execute
 * spreads it.
 */
export function executeBoundInTransaction<T>(em: EntityManager, statement: Statement): Promise<T[]> {
  return rowsInTransaction<T>(em, statement);
}
