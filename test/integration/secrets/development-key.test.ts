import type { EntityManager } from '@mikro-orm/postgresql';
import { DEVELOPMENT_JWT_KEY_ID, DEVELOPMENT_KEY_ID, resolveDataKeys } from '../../../src/domain/secrets/data-keys';
import { ADMIN, loginStaff } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';
import { dataKey, sealUnder } from './secrets-kit';

/**
 * Outside production without DATA_ENCRYPTION_KEYS, processes that start together agree on one
 * development key (insert if absent, then read: no process keeps a key of its own), and once
 * the variable is set the development key still opens what it sealed, so the re-seal can move it.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ label: 'devkey' });
});
afterAll(() => app?.stop());

test('when many processes resolve the development key at once, then they all get the same one and one row exists', async () => {
  await sql(app, 'delete from development_data_keys');
  const { orm, config } = app.runtime.services;
  const options = { dataKeys: config.dataKeys, production: config.env === 'production' };
  const resolved = await Promise.all(Array.from({ length: 8 }, () => resolveDataKeys(options, orm.em.fork() as EntityManager)));
  const keys = new Set(resolved.map((r) => r.keys[0]!.key.toString('base64')));
  expect(keys.size).toBe(1);
  expect(resolved.every((r) => r.development && r.keys.length === 1 && r.keys[0]!.id === DEVELOPMENT_KEY_ID)).toBe(true);
  expect(await sql(app, 'select id from development_data_keys')).toEqual([{ id: DEVELOPMENT_KEY_ID }]);
});

test('when DATA_ENCRYPTION_KEYS is set later outside production, then the development key still opens but no longer seals', async () => {
  const k1 = dataKey('k1');
  const [row] = await sql<{ key: string }>(app, 'select key from development_data_keys where id = ?', [DEVELOPMENT_KEY_ID]);
  const development = { id: DEVELOPMENT_KEY_ID, key: Buffer.from(row!.key, 'base64') };
  const configured = await startTestApp({ shareWith: app, env: { ROLE: 'api', DATA_ENCRYPTION_KEYS: k1.pair } });
  try {
    const box = configured.runtime.services.webhookSecrets;
    expect(box.currentKeyId).toBe('k1');
    expect(box.keyIds).toEqual(['k1', DEVELOPMENT_KEY_ID]);
    expect(box.open(sealUnder([development], 'webhook-secret', 'whsec_local'), 'webhook')).toBe('whsec_local');
  } finally {
    await configured.stop();
  }
});

test('when JWT_SECRET is unset outside production, then tokens are signed with a key kept in the database: a restarted process accepts them', async () => {
  const first = await startTestApp({ shareWith: app, env: { JWT_SECRET: '' } });
  let token: string;
  try {
    token = (await loginStaff(first, ADMIN.email, ADMIN.password)).access_token;
    expect((await first.request('GET', '/api/admin/roles', { token })).status).toBe(200);
    expect(
      first.logs.some((l) => String(l.msg).startsWith('JWT_SECRET is not set: tokens are signed with a development key')),
    ).toBe(true);
  } finally {
    await first.stop();
  }
  // Another process, with a placeholder secret of its own in its configuration, as after a restart.
  const second = await startTestApp({ shareWith: app, env: { JWT_SECRET: '' } });
  try {
    expect(second.config.jwt.secret).not.toBe(first.config.jwt.secret);
    expect((await second.request('GET', '/api/admin/roles', { token })).status).toBe(200);
    expect(await sql(app, 'select id from development_data_keys where id = ?', [DEVELOPMENT_JWT_KEY_ID])).toHaveLength(1);
  } finally {
    await second.stop();
  }
  // A process with its own JWT_SECRET does not take the development key.
  expect((await app.request('GET', '/api/admin/roles', { token })).status).toBe(401);
});
