import { randomUUID } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { z } from 'zod';
import { dec, type Dec } from '../../platform/decimal';
import type { ValidationItem } from '../../platform/errors';
import { CurrencyCode } from '../../platform/money-text';
import { signedHeaders, signingKey } from '../webhooks/signature';

/**
 * How each kind of payment provider talks to us: how its callbacks are authenticated, how
 * their bodies read as a payment report, and where a customer pays. Everything after the
 * adapter (the inbound log, deduplication, the intent's states, crediting) is the same for
 * every provider. A provider integration is one more entry in PSP_ADAPTERS.
 */

/** A provider's report about one payment, whatever its wire format. */
export interface PaymentReport {
  /** The provider's id of the payment: with `status`, the key a repeated report is recognised by. */
  external_id: string;
  intent_id: string;
  status: 'completed' | 'failed' | 'charged_back' | 'refunded';
  amount: Dec;
  currency: string;
  instrument_fingerprint?: string | undefined;
}

/** What a callback brought: its exact body (which a signature covers) and its headers. */
export interface InboundCallText {
  rawBody: string | undefined;
  headers: Record<string, string | string[] | undefined>;
}

export type ParsedReport = { ok: true; report: PaymentReport } | { ok: false; issues: ValidationItem[] };

export interface PspAdapter {
  /** Whether the call is the provider's own: signed with one of `secrets` (the current one, and a replaced one for 24 hours). */
  verify(call: InboundCallText, secrets: readonly string[]): boolean;
  /** The body read as a report, or why it cannot be (answered 422, logged `failed`). */
  parse(body: unknown): ParsedReport;
  /** Where the customer pays for an intent, or null when the adapter has no payment page. */
  paymentPage(config: Record<string, unknown>, intentId: string): string | null;
}

const MoneyIn = z
  .union([z.number(), z.string().regex(/^-?[0-9]+(\.[0-9]+)?$/)])
  .describe('The amount paid, as a number or decimal text');

/** The body of the `generic_hmac` and `simulator` adapters. */
export const PaymentCallbackSchema = z.object({
  external_id: z.string().min(1).max(128),
  intent_id: z.uuid(),
  status: z.enum(['completed', 'failed', 'charged_back', 'refunded']),
  amount: MoneyIn,
  currency: CurrencyCode,
  instrument_fingerprint: z.string().min(1).max(128).optional(),
});
export type PaymentCallback = z.input<typeof PaymentCallbackSchema>;

function headerText(v: string | string[] | undefined): string {
  return Array.isArray(v) ? v.join(' ') : (v ?? '');
}

/**
 * The Standard Webhooks scheme webhooks are signed with, the other way round: HMAC-SHA256 of
 * `<webhook-id>.<webhook-timestamp>.<raw body>` under one of the secrets, with the timestamp
 * at most 5 minutes from now (the `standardwebhooks` package's tolerance).
 */
export function standardWebhooksSigned(call: InboundCallText, secrets: readonly string[]): boolean {
  if (call.rawBody === undefined) return false;
  const headers = {
    'webhook-id': headerText(call.headers['webhook-id']),
    'webhook-timestamp': headerText(call.headers['webhook-timestamp']),
    'webhook-signature': headerText(call.headers['webhook-signature']),
  };
  return secrets.some((secret) => {
    try {
      new StandardWebhook(signingKey(secret), { format: 'raw' }).verify(call.rawBody!, headers);
      return true;
    } catch {
      return false;
    }
  });
}

function parseStandardBody(body: unknown): ParsedReport {
  const parsed = PaymentCallbackSchema.safeParse(body);
  if (parsed.success) return { ok: true, report: { ...parsed.data, amount: dec(parsed.data.amount) } };
  return {
    ok: false,
    issues: parsed.error.issues.map((i) => ({
      loc: ['body', ...(i.path as (string | number)[])],
      msg: i.message,
      type: i.code === 'invalid_type' && i.input === undefined ? 'missing' : 'value_error',
    })),
  };
}

/** A provider of our own format: Standard Webhooks signatures, PaymentCallbackSchema bodies, its page in `config.payment_page_url`. */
const genericHmac: PspAdapter = {
  verify: standardWebhooksSigned,
  parse: parseStandardBody,
  paymentPage(config, intentId) {
    const page = config.payment_page_url;
    return typeof page === 'string' && page ? `${page}${page.includes('?') ? '&' : '?'}intent_id=${intentId}` : null;
  },
};

/** The simulator: the generic format, no payment page (staff tell it the outcome: POST /simulator/payments/{intent_id}). */
const simulator: PspAdapter = { ...genericHmac, paymentPage: () => null };

export const PSP_ADAPTERS = ['simulator', 'generic_hmac'] as const;
export type PspAdapterName = (typeof PSP_ADAPTERS)[number];

const ADAPTERS: Record<PspAdapterName, PspAdapter> = { simulator, generic_hmac: genericHmac };

export function pspAdapter(name: string): PspAdapter {
  const adapter = ADAPTERS[name as PspAdapterName];
  if (!adapter) throw new Error(`no payment adapter ${name}`);
  return adapter;
}

/** A callback as the simulator sends it: the body and its Standard Webhooks headers, signed with `secret`. */
export function signedSimulatorCall(secret: string, body: PaymentCallback): { body: string; headers: Record<string, string> } {
  const text = JSON.stringify(body);
  return { body: text, headers: { ...signedHeaders(signingKey(secret), `msg_${randomUUID()}`, text) } };
}
