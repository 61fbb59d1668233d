import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from '../../src/db/orm-config';
import { isSequenceNoise } from '../../src/db/schema-noise';
import { SQL_FUNCTIONS, sqlFunction } from '../../src/db/functions/sql-function';
import { sql, startTestApp, type TestApp } from '../helpers/test-app';

/**
 * The entities and the committed migrations describe the same schema. A column, index or
 * table made by a migration but unknown to the entities would otherwise be dropped by the next
 * `npm run migration:create`, in a migration that looks routine.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ label: 'schemadrift', env: { ROLE: 'api' } });
});
afterAll(() => app?.stop());

test('when the migrated schema is compared with the entities, then nothing differs', async () => {
  const orm = await MikroORM.init(ormConfig(app.config.databaseUrl));
  try {
    const sql = await orm.schema.getUpdateSchemaSQL({ wrap: false });
    const statements = sql
      .split(/;\s*\n/)
      .map((s) => s.trim())
      .filter((s) => s && !isSequenceNoise(s));
    expect(statements).toEqual([]);
  } finally {
    await orm.close(true);
  }
});

/** One statement's text with its `--` comment lines, final semicolon and layout left out. */
function normalised(text: string): string {
  return text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')
    .replace(/\s+/g, ' ')
    .replace(/\s*;\s*$/, '')
    .trim();
}

test('when every stored function of the migrated database is compared with its file in src/db/functions, then they are the same', async () => {
  const rows = await sql<{ name: string; def: string }>(
    app,
    `SELECT p.proname AS name, pg_get_functiondef(p.oid) AS def
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public' ORDER BY p.proname`,
  );
  // Every function has a file: one made only by a migration's inline text has no home.
  expect(rows.map((r) => r.name)).toEqual([...SQL_FUNCTIONS].sort());
  for (const row of rows) {
    expect({ name: row.name, def: normalised(row.def) }).toEqual({
      name: row.name,
      def: normalised(sqlFunction(row.name as (typeof SQL_FUNCTIONS)[number])),
    });
  }
});
