import { randomBytes } from 'node:crypto';
import type { Job } from 'bullmq';
import { SEALED_COLUMNS } from '../../../src/domain/secrets/sealed-columns';
import { adminToken } from '../../helpers/identity';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver';
import { dataKey, insertOrderOpened, legacySeal } from './secrets-kit';

/**
 * A rotation as docs/operations.md describes it: the new key first beside the old one, the re-seal,
 * then the old key removed. Values of the release before DATA_ENCRYPTION_KEYS (sealed under
 * JWT_SECRET) move too. Afterwards a deployment with only the new key opens everything.
 */
jest.setTimeout(90_000);

const K1 = dataKey('k1');
const K2 = dataKey('k2');
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const SEED = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';

const apps: TestApp[] = [];
let receiver: Receiver;
afterAll(async () => {
  // The first app owns the database: it goes last.
  for (const app of apps.reverse()) await app.stop();
  await receiver?.close();
});

async function sealedValues(app: TestApp): Promise<string[]> {
  const values: string[] = [];
  for (const c of SEALED_COLUMNS) {
    const rows = await sql<{ v: string }>(app, `select "${c.column}" as v from "${c.table}" where "${c.column}" is not null`);
    values.push(...rows.map((r) => r.v));
  }
  return values;
}

async function reseal(app: TestApp, token: string): Promise<Job> {
  const queued = await app.request('POST', '/api/admin/secrets/reseal', { token });
  expect(queued.status).toBe(202);
  expect(queued.body).toMatchObject({ job_id: 'reseal-secrets', current_key_id: 'k2' });
  const queue = app.runtime.services.jobs.queue('events');
  return waitFor(
    'the re-seal job to finish',
    async () => {
      const job = await queue.getJob('reseal-secrets');
      return job && (job.finishedOn ? job : undefined);
    },
    20_000,
  );
}

test('when a new key is put first and the re-seal runs, then every secret moves to it and the old key can go', async () => {
  const before = await startTestApp({ label: 'keyrotation', env: { ROLE: 'api', DATA_ENCRYPTION_KEYS: K1.pair } });
  apps.push(before);
  receiver = await startReceiver(SECRET);
  const made = await before.request('POST', '/webhooks', {
    token: await adminToken(before),
    body: { endpoint_url: receiver.url, secret: SECRET, events: ['order.opened'] },
  });
  expect(made.status).toBe(201);
  // The admin's TOTP seed under k1, a pending one as the release before this one sealed it.
  await sql(before, 'update staff_users set totp_secret = ?, totp_pending_secret = ?', [
    before.runtime.services.identity.totpBox.seal(SEED),
    legacySeal(before.config.jwt.secret, 'totp-secret', SEED),
  ]);
  expect((await sealedValues(before)).map((v) => v.slice(0, 6).replace(/^v1\..*/, 'v1.'))).toEqual(['v2:k1:', 'v2:k1:', 'v1.']);

  // Step 2: every process runs with k2 first, k1 still listed.
  const during = await startTestApp({ shareWith: before, env: { DATA_ENCRYPTION_KEYS: `${K2.pair},${K1.pair}` } });
  apps.push(during);
  const token = await adminToken(during);
  const keys = await during.request('GET', '/api/admin/secrets', { token });
  expect(keys.status).toBe(200);
  expect(keys.body).toMatchObject({ current_key_id: 'k2', key_ids: expect.arrayContaining(['k2', 'k1']) });
  expect(keys.body.sealed_by_key).toEqual({ k1: 2, '(JWT_SECRET)': 1 });

  // Step 3: the re-seal.
  const run = await reseal(during, token);
  expect(run.failedReason).toBeUndefined();
  expect(run.returnvalue).toMatchObject({
    key_id: 'k2',
    failed: 0,
    moved: { 'webhooks.secret_sealed': 1, 'staff_users.totp_secret': 1, 'staff_users.totp_pending_secret': 1 },
    sealed_by_key: { k2: 3 },
  });
  expect((await sealedValues(during)).every((v) => v.startsWith('v2:k2:'))).toBe(true);
  expect((await during.request('GET', '/api/admin/secrets', { token })).body.sealed_by_key).toEqual({ k2: 3 });

  // Running it again moves nothing and changes nothing.
  const values = await sealedValues(during);
  const again = await reseal(during, token);
  expect(again.returnvalue).toMatchObject({ failed: 0, sealed_by_key: { k2: 3 } });
  expect(Object.values(again.returnvalue.moved as Record<string, number>).every((n) => n === 0)).toBe(true);
  expect(await sealedValues(during)).toEqual(values);
  await during.stop();
  apps.pop();

  // Step 4: k1 removed. Webhooks still sign and TOTP seeds still open.
  const after = await startTestApp({ shareWith: before, env: { DATA_ENCRYPTION_KEYS: K2.pair } });
  apps.push(after);
  const [seeds] = await sql<{ totp_secret: string; totp_pending_secret: string }>(
    after,
    'select totp_secret, totp_pending_secret from staff_users limit 1',
  );
  const box = after.runtime.services.identity.totpBox;
  expect([box.open(seeds!.totp_secret, 'seed'), box.open(seeds!.totp_pending_secret, 'pending seed')]).toEqual([SEED, SEED]);
  const event = await insertOrderOpened(after);
  await waitFor('the event delivered', async () => receiver.eventIds().includes(event), 20_000);
  expect(receiver.received.every((r) => r.verified !== null)).toBe(true);
});

test('when the schema is read, then every column that looks like it holds a secret is one the re-seal walks', async () => {
  // A sealed column the re-seal does not know would keep its old key id, and removing that key would break it.
  // A `*_hash` column holds a one-way digest (a dashboard session's secret), never a sealed value;
  // nor does a column that is not text (when a rotated webhook secret stops signing).
  const columns = await sql<{ name: string }>(
    apps[0]!,
    `select table_name || '.' || column_name as name from information_schema.columns
      where table_schema = current_schema() and (column_name like '%secret%' or column_name like '%sealed%')
        and column_name not like '%\\_hash' and data_type in ('text', 'character varying', 'bytea')`,
  );
  expect(columns.map((c) => c.name).sort()).toEqual(SEALED_COLUMNS.map((c) => `${c.table}.${c.column}`).sort());
});
