import { Client } from 'pg';
import { ensureDatabase, quoteIdent, runMigrations, splitDatabaseUrl } from '../../src/db/database';
import { TEMPLATE_DATABASE, TEST_SERVER_URL, databaseUrl } from './test-database';

/**
 * Creates the template database fresh and migrates it with the committed migrations,
 * exactly as `npm start` would; each test file then clones it. Databases left by earlier,
 * interrupted runs are dropped first.
 */
async function main(): Promise<void> {
  const admin = new Client({ connectionString: splitDatabaseUrl(TEST_SERVER_URL).adminUrl });
  await admin.connect();
  try {
    const stale = await admin.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE 't\\_%'",
      [TEMPLATE_DATABASE],
    );
    for (const { datname } of stale.rows) await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(datname)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
  const url = databaseUrl(TEMPLATE_DATABASE);
  await ensureDatabase(url);
  await runMigrations(url);
}

main().catch((err: unknown) => {
  console.error('could not prepare the template database:', err);
  process.exit(1);
});
