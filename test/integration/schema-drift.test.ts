import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from '../../src/db/orm-config';
import { isSequenceNoise } from '../../src/db/schema-noise';
import { startTestApp, type TestApp } from '../helpers/test-app';

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
