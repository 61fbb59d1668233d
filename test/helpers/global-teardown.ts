import { quoteIdent } from '../../src/db/database';
import { runId, withAdmin } from './test-database';

/** Drops whatever databases of this run a crashed or interrupted test file left behind. */
export default async function globalTeardown(): Promise<void> {
  await withAdmin(async (admin) => {
    const left = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [
      `t\\_${runId()}\\_%`,
    ]);
    for (const { datname } of left.rows) await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(datname)} WITH (FORCE)`);
  });
}
