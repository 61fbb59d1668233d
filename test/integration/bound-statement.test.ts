import type { EntityManager } from '@mikro-orm/postgresql';
import { executeBound } from '../../src/db/bound-statement';
import { namedStatement } from '../../src/platform/named-sql';
import { startTestApp, type TestApp } from '../helpers/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ label: 'bound', env: { ROLE: 'api' } });
  await fork().execute('create table bound_probe (id int primary key, note text, at timestamptz)');
});
afterAll(() => app?.stop());

const fork = () => app.runtime.services.orm.em.fork() as EntityManager;
const INSERT = namedStatement<{ id: number; note: string; at: Date }>(
  'insert into bound_probe (id, note, at) values (:id, :note, :at) returning id, note, at',
);

test('when a value looks like SQL, then it is stored as written, as a parameter', async () => {
  const note = `it's'); drop table bound_probe; --`;
  const at = new Date('2026-11-25T01:02:03.456Z');
  const [row] = await executeBound<{ id: number; note: string; at: string | Date }>(fork(), INSERT.bind({ id: 1, note, at }));
  expect(row).toMatchObject({ id: 1, note });
  // Timestamps come back as the ORM's driver gives them (text), to the millisecond.
  expect(new Date(row!.at).toISOString()).toBe(at.toISOString());
});

test('when called inside a transaction, then the statement is part of it and rolls back with it', async () => {
  await expect(
    fork().transactional(async (tx) => {
      await executeBound(tx, INSERT.bind({ id: 2, note: 'in the transaction', at: new Date() }));
      throw new Error('roll back');
    }),
  ).rejects.toThrow('roll back');
  expect(await fork().execute('select id from bound_probe where id = 2')).toEqual([]);
});

test('when the statement fails, then the error is the database error and the pool stays usable', async () => {
  await expect(executeBound(fork(), INSERT.bind({ id: 1, note: 'again', at: new Date() }))).rejects.toMatchObject({
    code: '23505',
  });
  const [row] = await executeBound<{ n: number }>(fork(), { sql: 'select count(*)::int as n from bound_probe', values: [] });
  expect(row!.n).toBe(1);
});
