import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { INTEGRATION_KINDS, type Integration } from '../../entities/integration.entity';
import { dec } from '../../platform/decimal';
import { CurrencyCode, MoneyText } from '../../platform/money-text';
import { AMOUNT_MAX } from '../../platform/bounds';
import { previousSecretValidUntil } from '../../platform/rotating-secret';
import { signingSecretField } from '../webhooks/signature';
import { withPlaces } from '../../platform/decimal-places';
import { PSP_ADAPTERS } from './adapters';

/**
 * The shapes of the integrations registry and its payment providers (integrations.ts): the
 * bodies the routes take, the views they answer, and the rules of a provider's terms.
 */

const Amount = withPlaces(z.number().gt(0).max(AMOUNT_MAX), 2);

const CallbackSecret = signingSecretField(
  'Write-only: the key callbacks are signed with (Standard Webhooks): at least 24 characters, or `whsec_` and the ' +
    'base64 of 24 to 64 bytes. Never returned; replacing it keeps the old one valid for 24 hours.',
);

const Cidr = z
  .string()
  .max(64)
  .refine((v) => parseRange(v) !== undefined, {
    message: 'Expected an IP address or a CIDR range',
    params: { type: 'value_error' },
  })
  .describe('An IP address or CIDR range (`203.0.113.0/24`, `2001:db8::/32`)');

const Fee = z
  .object({
    type: z.enum(['none', 'percent', 'fixed']),
    value: withPlaces(z.number().min(0).max(AMOUNT_MAX), 4).default(0),
    borne_by: z.enum(['broker', 'customer']).default('broker'),
  })
  .describe(
    'What the provider charges: `percent` of the amount paid or a `fixed` amount in its currency. Borne by the ' +
      '`customer`, it is taken from what the account is credited; by the `broker`, the account gets the whole amount.',
  );

const PaymentPage = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  .nullable()
  .optional()
  .describe("The provider's payment page: an intent's `redirect_url` is it with `intent_id=<id>` added (adapters that have one)");

/** A provider's terms, as its `config` holds them. */
export const PspConfigSchema = z.object({
  currencies: z.array(CurrencyCode).min(1).max(50),
  min_amount: Amount,
  max_amount: Amount,
  fee: Fee.default({ type: 'none', value: 0, borne_by: 'broker' }),
  allowed_ips: z.array(Cidr).max(100).nullable().optional(),
  payment_page_url: PaymentPage,
});
export type PspConfig = z.output<typeof PspConfigSchema>;

export const ProviderCreateSchema = z.object({
  name: z.string().trim().min(1).max(100),
  kind: z.literal('psp').default('psp'),
  adapter: z.enum(PSP_ADAPTERS),
  currencies: PspConfigSchema.shape.currencies,
  min_amount: Amount,
  max_amount: Amount,
  fee: PspConfigSchema.shape.fee,
  callback_secret: CallbackSecret,
  allowed_ips: PspConfigSchema.shape.allowed_ips,
  payment_page_url: PaymentPage,
  enabled: z.boolean().default(true),
});
export type ProviderCreate = z.output<typeof ProviderCreateSchema>;

export const ProviderPatchSchema = z.object({
  name: z.string().trim().min(1).max(100).optional(),
  currencies: PspConfigSchema.shape.currencies.optional(),
  min_amount: Amount.optional(),
  max_amount: Amount.optional(),
  fee: Fee.optional(),
  callback_secret: CallbackSecret.optional(),
  allowed_ips: PspConfigSchema.shape.allowed_ips,
  payment_page_url: PaymentPage,
  enabled: z.boolean().optional(),
});
export type ProviderPatch = z.output<typeof ProviderPatchSchema>;

export const ProviderFeeSchema = z.object({
  type: z.enum(['none', 'percent', 'fixed']),
  value: z.string(),
  borne_by: z.enum(['broker', 'customer']),
});

export const ProviderSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  kind: z.literal('psp'),
  adapter: z.string(),
  currencies: z.array(CurrencyCode),
  min_amount: MoneyText,
  max_amount: MoneyText,
  fee: ProviderFeeSchema,
  allowed_ips: z.array(z.string()).nullable(),
  payment_page_url: z.string().meta({ format: 'uri' }).nullable(),
  enabled: z.boolean(),
  callback_url: z
    .string()
    .meta({ format: 'uri-reference' })
    .describe('Where the provider sends its callbacks: the public callback route of this provider'),
  previous_secret_expires_at: z.iso
    .datetime()
    .nullable()
    .describe('After a secret change: until when callbacks signed with the replaced secret are still accepted; null otherwise'),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type ProviderView = z.output<typeof ProviderSchema>;

export const IntegrationSchema = z.object({
  id: z.uuid(),
  kind: z.enum(INTEGRATION_KINDS),
  adapter: z.string(),
  name: z.string(),
  enabled: z.boolean(),
  config: z.record(z.string(), z.unknown()).describe('The adapter settings (never secrets)'),
  last_inbound_at: z.iso.datetime().nullable(),
  last_error: z.string().nullable(),
  previous_secret_expires_at: z.iso.datetime().nullable(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type IntegrationView = z.output<typeof IntegrationSchema>;

const Secrets = z
  .record(z.string().min(1).max(64), z.string().min(1).max(4096))
  .describe('Write-only secrets the adapter needs (a psp: `callback_secret`), sealed at rest and never returned');

export const IntegrationCreateSchema = z.object({
  kind: z.enum(INTEGRATION_KINDS),
  adapter: z.string().trim().min(1).max(32),
  name: z.string().trim().min(1).max(100),
  config: z.record(z.string(), z.unknown()).default({}),
  secrets: Secrets.default({}),
  enabled: z.boolean().default(true),
});
export type IntegrationCreate = z.output<typeof IntegrationCreateSchema>;

export const IntegrationPatchSchema = z.object({
  name: z.string().trim().min(1).max(100).optional(),
  enabled: z.boolean().optional(),
  config: z.record(z.string(), z.unknown()).optional(),
  secrets: Secrets.optional(),
});
export type IntegrationPatch = z.output<typeof IntegrationPatchSchema>;

function parseRange(v: string): [ipaddr.IPv4 | ipaddr.IPv6, number] | undefined {
  try {
    if (v.includes('/')) return ipaddr.parseCIDR(v);
    const addr = ipaddr.parse(v);
    return [addr, addr.kind() === 'ipv4' ? 32 : 128];
  } catch {
    return undefined;
  }
}

/** Whether `address` lies in one of the ranges (an IPv4-mapped IPv6 address is judged as its IPv4 form). */
export function addressAllowed(address: string | null, ranges: readonly string[]): boolean {
  if (!address) return false;
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(address);
  } catch {
    return false;
  }
  return ranges.some((r) => {
    const range = parseRange(r);
    if (!range) return false;
    const [base, bits] = range;
    const b =
      base.kind() === 'ipv6' && (base as ipaddr.IPv6).isIPv4MappedAddress() ? (base as ipaddr.IPv6).toIPv4Address() : base;
    if (b.kind() !== addr.kind()) return false;
    return addr.match(b, b.kind() === base.kind() ? bits : bits - 96);
  });
}

export function pspConfig(i: Integration): PspConfig {
  return i.config as unknown as PspConfig;
}

const callbackPath = (id: string) => `/api/integrations/payments/${id}/callbacks`;

export function providerView(i: Integration): ProviderView {
  const c = pspConfig(i);
  return {
    id: i.id,
    name: i.name,
    kind: 'psp',
    adapter: i.adapter,
    currencies: c.currencies,
    min_amount: dec(c.min_amount).toFixed(2),
    max_amount: dec(c.max_amount).toFixed(2),
    fee: { type: c.fee.type, value: dec(c.fee.value).toFixed(), borne_by: c.fee.borne_by },
    allowed_ips: c.allowed_ips ?? null,
    payment_page_url: c.payment_page_url ?? null,
    enabled: i.enabled,
    callback_url: callbackPath(i.id),
    previous_secret_expires_at: previousSecretValidUntil(i)?.toISOString() ?? null,
    created_at: i.createdAt.toISOString(),
    updated_at: i.updatedAt.toISOString(),
  };
}

export function integrationView(i: Integration): IntegrationView {
  return {
    id: i.id,
    kind: i.kind,
    adapter: i.adapter,
    name: i.name,
    enabled: i.enabled,
    config: i.config,
    last_inbound_at: i.lastInboundAt?.toISOString() ?? null,
    last_error: i.lastError ?? null,
    previous_secret_expires_at: previousSecretValidUntil(i)?.toISOString() ?? null,
    created_at: i.createdAt.toISOString(),
    updated_at: i.updatedAt.toISOString(),
  };
}
