import { ensureDatabase, runMigrations } from '../../src/db/database';
import { TEMPLATE_DATABASE, directDatabaseUrl, withAdmin } from './test-database';

/**
 * Creates the template database if this set of migrations has none yet, migrating it with
 * the committed migrations exactly as `npm start` would; each test file then clones it.
 * An advisory lock keeps two runs from building it at once.
 */
async function main(): Promise<void> {
  await withAdmin(async (admin) => {
    await admin.query('SELECT pg_advisory_lock(7406611213)');
    try {
      const url = directDatabaseUrl(TEMPLATE_DATABASE);
      await ensureDatabase(url);
      await runMigrations(url);
    } finally {
      await admin.query('SELECT pg_advisory_unlock(7406611213)');
    }
  });
}

main().catch((err: unknown) => {
  console.error('could not prepare the template database:', err);
  process.exit(1);
});
