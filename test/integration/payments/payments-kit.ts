import { randomBytes, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { LoggedIn } from '../../helpers/identity';
import { sql, type TestApp, type TestResponse } from '../../helpers/test-app';
import { expectOk } from '../trading/trading-kit';

/** A fresh Standard Webhooks secret, as a provider would be given. */
export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

export interface Provider {
  id: string;
  secret: string;
}

export async function createProvider(
  app: TestApp,
  token: string,
  overrides: Record<string, unknown> = {},
): Promise<Provider & { body: any }> {
  const secret = (overrides.callback_secret as string | undefined) ?? newSecret();
  const body = expectOk(
    await app.request('POST', '/api/admin/payment-providers', {
      token,
      body: {
        name: `PSP ${randomBytes(3).toString('hex')}`,
        kind: 'psp',
        adapter: 'generic_hmac',
        currencies: ['USD', 'EUR'],
        min_amount: 10,
        max_amount: 5000,
        fee: { type: 'none', value: 0, borne_by: 'broker' },
        callback_secret: secret,
        enabled: true,
        ...overrides,
      },
    }),
    201,
    'create provider',
  );
  return { id: body.id, secret, body };
}

export function createIntent(
  app: TestApp,
  customer: LoggedIn,
  body: Record<string, unknown>,
  key: string = randomUUID(),
): Promise<TestResponse> {
  return app.request('POST', '/customers/me/deposits', { token: customer.token, body, headers: { 'idempotency-key': key } });
}

export interface CallbackBody {
  external_id: string;
  intent_id: string;
  status: 'completed' | 'failed' | 'charged_back' | 'refunded';
  amount: string | number;
  currency: string;
  instrument_fingerprint?: string;
}

/**
 * Posts a callback as a provider does: the body signed with the Standard Webhooks reference
 * library (`standardwebhooks`, the provider's side), over real HTTP to the public route.
 */
export async function sendCallback(
  app: TestApp,
  providerId: string,
  secret: string,
  body: CallbackBody | Record<string, unknown>,
  options: { at?: Date; msgId?: string; headers?: Record<string, string> } = {},
): Promise<TestResponse> {
  const raw = JSON.stringify(body);
  const msgId = options.msgId ?? `msg_${randomUUID()}`;
  const at = options.at ?? new Date();
  const signature = new Webhook(secret).sign(msgId, at, raw);
  return app.request('POST', `/api/integrations/payments/${providerId}/callbacks`, {
    rawBody: raw,
    headers: {
      'content-type': 'application/json',
      'webhook-id': msgId,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signature,
      ...options.headers,
    },
  });
}

export async function inboundOutcomes(app: TestApp, providerId: string): Promise<Record<string, number>> {
  const rows = await sql<{ outcome: string; n: number }>(
    app,
    'select outcome, count(*)::int as n from integration_inbound where integration_id = ? group by outcome',
    [providerId],
  );
  return Object.fromEntries(rows.map((r) => [r.outcome, r.n]));
}

export async function depositRows(app: TestApp, intentId: string): Promise<Array<{ kind: string; amount: string }>> {
  return sql(
    app,
    `select kind, amount::text as amount from ledger_entries where reference_type = 'deposit_intent' and reference_id = ? order by seq`,
    [intentId],
  );
}
