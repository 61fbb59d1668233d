import { rmSync } from 'node:fs';
import { quoteIdent } from '../../src/db/database';
import { runId, withAdmin } from './test-database';
import { deleteKeys } from './test-app';

/**
 * Drops whatever databases of this run a crashed or interrupted test file left behind, and
 * the Redis keys under this run's queue prefixes (see testQueuePrefix), and the run's OpenAPI text.
 */
export default async function globalTeardown(): Promise<void> {
  if (process.env.TEST_OPENAPI_TEXT_FILE) rmSync(process.env.TEST_OPENAPI_TEXT_FILE, { force: true });
  await deleteKeys(`test-${runId()}-*`);
  await deleteKeys(`{test-${runId()}-*`);
  await withAdmin(async (admin) => {
    const left = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [
      `t\\_${runId()}\\_%`,
    ]);
    for (const { datname } of left.rows) await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(datname)} WITH (FORCE)`);
  });
}
