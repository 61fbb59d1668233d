import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { DataKeyRing, type DataKey } from '../../../src/platform/secret-box';
import { sql, type TestApp } from '../../helpers/test-app';

/** A fresh 32-byte key under `id`, and its DATA_ENCRYPTION_KEYS form. */
export function dataKey(id: string): DataKey & { pair: string } {
  const key = randomBytes(32);
  return { id, key, pair: `${id}:${key.toString('base64')}` };
}

/** Seals as a deployment with only these keys would (the first seals). */
export function sealUnder(keys: DataKey[], purpose: string, plain: string): string {
  return new DataKeyRing(keys, undefined, () => undefined).box(purpose).seal(plain);
}

/** A webhook row written straight to the table, its secret sealed as given (the API seals under the current key only). */
export async function insertWebhook(app: TestApp, url: string, secretSealed: string): Promise<string> {
  const [row] = await sql<{ id: string }>(
    app,
    `insert into webhooks (id, created_at, updated_at, endpoint_url, secret_sealed, is_active, batch_size_max, events)
     values (gen_random_uuid(), now(), now(), ?, ?, true, 10, '["order.opened"]') returning id`,
    [url, secretSealed],
  );
  return row!.id;
}

/** An `order.opened` domain event, which the relay hands to every webhook subscribed to it. */
export async function insertOrderOpened(app: TestApp): Promise<string> {
  const [row] = await sql<{ id: string }>(
    app,
    `insert into domain_events (id, created_at, updated_at, type, aggregate_type, aggregate_id, data)
     values (gen_random_uuid(), now(), now(), 'order.opened', 'order', 'acct-1', '{"n": 1}') returning id`,
  );
  return row!.id;
}

/** What the release before DATA_ENCRYPTION_KEYS wrote: `v1.<iv>.<body>.<tag>` under HKDF(JWT_SECRET, label). */
export function legacySeal(jwtSecret: string, label: string, plain: string): string {
  const key = Buffer.from(hkdfSync('sha256', jwtSecret, Buffer.alloc(0), `trading-api:${label}`, 32));
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
}
