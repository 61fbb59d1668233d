import type { EntityManager } from '@mikro-orm/postgresql';
import { findPage, inOneSnapshot } from '../../src/db/find-page';
import { Role } from '../../src/entities/role.entity';
import { startTestApp, type TestApp } from '../helpers/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ label: 'page', env: { ROLE: 'api' } });
  await fork().execute('create table snapshot_probe (id int primary key)');
});
afterAll(() => app?.stop());

const fork = () => app.runtime.services.orm.em.fork() as EntityManager;
const count = async (em: EntityManager) =>
  Number((await em.execute<Array<{ n: string }>>('select count(*) as n from snapshot_probe'))[0]!.n);

test('when a row commits between two reads in one snapshot, then both reads see the same rows', async () => {
  const seen = await inOneSnapshot(fork(), async (tx) => {
    const before = await count(tx);
    // Committed by another connection between the two statements, as a concurrent write would be.
    await fork().execute('insert into snapshot_probe (id) values (1)');
    return [before, await count(tx)];
  });
  expect(seen).toEqual([0, 0]);
  expect(await count(fork())).toBe(1);
});

test('when called inside a transaction, then the reads are part of it', async () => {
  await fork().transactional(async (tx) => {
    await tx.execute('insert into snapshot_probe (id) values (2)');
    expect(await inOneSnapshot(tx as EntityManager, count)).toBe(2);
  });
});

test('when a page is read through its snapshot, then it answers its items and their total', async () => {
  const page = await findPage(fork(), Role, {}, { page: 1, page_size: 50 }, { orderBy: { name: 'asc' } }, (r) => r.name);
  expect(page.total).toBe(page.items.length);
  expect(page).toMatchObject({ page: 1, page_size: 50 });
});
