import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { DepositIntent } from '../../entities/deposit-intent.entity';
import { INTEGRATION_KINDS, Integration, type IntegrationKind } from '../../entities/integration.entity';
import { dec } from '../../platform/decimal';
import { errors, fieldError } from '../../platform/errors';
import type { SecretBox } from '../../platform/secret-box';
import { recordAudit } from '../audit/audit';
import type { StaffCaller } from '../../platform/caller';
import { CurrencyCode, MoneyText } from '../../platform/money-text';
import { AMOUNT_MAX } from '../../platform/bounds';
import { previousSecretValidUntil, rotateSealedSecret } from '../../platform/rotating-secret';
import { secretProblem } from '../webhooks/signature';
import { withPlaces } from '../../platform/decimal-places';
import { PSP_ADAPTERS } from './adapters';

/**
 * The integrations registry and its payment providers: one `integrations` row per outside
 * system, seen as a provider (`/api/admin/payment-providers`) when its kind is `psp`, and as a
 * registry entry (`/api/admin/integrations`) whatever its kind. A provider's terms live in the
 * row's `config`; its callback secret among its sealed `secrets`.
 */

const Amount = withPlaces(z.number().gt(0).max(AMOUNT_MAX), 2);

const CallbackSecret = z
  .string()
  .superRefine((v, ctx) => {
    const problem = secretProblem(v);
    if (problem) ctx.addIssue({ code: 'custom', message: problem, params: { type: 'value_error' } });
  })
  .describe(
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
type PspConfig = z.output<typeof PspConfigSchema>;

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
  payment_page_url: z.string().nullable(),
  enabled: z.boolean(),
  callback_url: z.string().describe('Where the provider sends its callbacks: the public callback route of this provider'),
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

function assertAmountRange(min: number | string, max: number | string, loc: (string | number)[]): void {
  if (dec(min).gt(dec(max))) throw fieldError('body', loc, 'max_amount must be at least min_amount');
}

/** A psp's config from the registry's generic body: the same rules as the providers' route. */
function checkPspConfig(config: Record<string, unknown>): PspConfig {
  const parsed = PspConfigSchema.safeParse(config);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw fieldError('body', ['config', ...(issue.path as (string | number)[])], issue.message);
  }
  assertAmountRange(parsed.data.min_amount, parsed.data.max_amount, ['config', 'max_amount']);
  return parsed.data;
}

function checkPspSecrets(secrets: Record<string, string>): void {
  const secret = secrets.callback_secret;
  if (secret === undefined)
    throw fieldError('body', ['secrets', 'callback_secret'], 'A payment provider needs a callback_secret', 'missing');
  const problem = secretProblem(secret);
  if (problem) throw fieldError('body', ['secrets', 'callback_secret'], problem);
}

function checkPspAdapter(adapter: string): void {
  if (!(PSP_ADAPTERS as readonly string[]).includes(adapter))
    throw fieldError('body', ['adapter'], `A payment provider's adapter is one of: ${PSP_ADAPTERS.join(', ')}`, 'literal_error');
}

export async function createIntegration(
  em: EntityManager,
  actor: StaffCaller,
  box: SecretBox,
  input: IntegrationCreate,
): Promise<Integration> {
  let config = input.config;
  if (input.kind === 'psp') {
    checkPspAdapter(input.adapter);
    config = checkPspConfig(input.config) as unknown as Record<string, unknown>;
    checkPspSecrets(input.secrets);
  }
  return em.transactional(async (tx) => {
    const integration = tx.create(Integration, {
      kind: input.kind,
      adapter: input.adapter,
      name: input.name,
      enabled: input.enabled,
      config,
      secretSealed: box.seal(JSON.stringify(input.secrets)),
    });
    recordAudit(tx, actor, {
      action: 'integration.created',
      entityType: 'integration',
      entityId: integration.id,
      after: integrationView(integration),
    });
    return integration;
  });
}

export async function createProvider(
  em: EntityManager,
  actor: StaffCaller,
  box: SecretBox,
  input: ProviderCreate,
): Promise<Integration> {
  assertAmountRange(input.min_amount, input.max_amount, ['max_amount']);
  const config: PspConfig = {
    currencies: [...new Set(input.currencies)],
    min_amount: input.min_amount,
    max_amount: input.max_amount,
    fee: input.fee,
    allowed_ips: input.allowed_ips ?? null,
    payment_page_url: input.payment_page_url ?? null,
  };
  return em.transactional(async (tx) => {
    const provider = tx.create(Integration, {
      kind: 'psp',
      adapter: input.adapter,
      name: input.name,
      enabled: input.enabled,
      config: config as unknown as Record<string, unknown>,
      secretSealed: box.seal(JSON.stringify({ callback_secret: input.callback_secret })),
    });
    recordAudit(tx, actor, {
      action: 'payment_provider.created',
      entityType: 'integration',
      entityId: provider.id,
      after: providerView(provider),
    });
    return provider;
  });
}

/** The integration, or 404; `kind` narrows it (a provider route finds only providers). */
export async function findIntegration(em: EntityManager, id: string, kind?: IntegrationKind, lock = false): Promise<Integration> {
  const found = await em.findOne(Integration, kind ? { id, kind } : { id }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
  if (!found) throw errors.notFound(kind === 'psp' ? 'Payment provider' : 'Integration');
  return found;
}

/** Replaces the secrets: the new set takes effect at once, the replaced one stays valid for 24 hours. */
async function replaceSecrets(tx: EntityManager, integration: Integration, box: SecretBox, secrets: Record<string, string>) {
  await tx.populate(integration, ['secretSealed']);
  rotateSealedSecret(integration, box, JSON.stringify(secrets));
}

export async function updateProvider(
  em: EntityManager,
  actor: StaffCaller,
  box: SecretBox,
  id: string,
  patch: ProviderPatch,
): Promise<Integration> {
  return em.transactional(async (tx) => {
    const provider = await findIntegration(tx, id, 'psp', true);
    const before = providerView(provider);
    const c = { ...pspConfig(provider) };
    if (patch.currencies !== undefined) c.currencies = [...new Set(patch.currencies)];
    if (patch.min_amount !== undefined) c.min_amount = patch.min_amount;
    if (patch.max_amount !== undefined) c.max_amount = patch.max_amount;
    if (patch.fee !== undefined) c.fee = patch.fee;
    if (patch.allowed_ips !== undefined) c.allowed_ips = patch.allowed_ips;
    if (patch.payment_page_url !== undefined) c.payment_page_url = patch.payment_page_url;
    assertAmountRange(c.min_amount, c.max_amount, [patch.max_amount !== undefined ? 'max_amount' : 'min_amount']);
    provider.config = c as unknown as Record<string, unknown>;
    if (patch.name !== undefined) provider.name = patch.name;
    if (patch.enabled !== undefined) provider.enabled = patch.enabled;
    if (patch.callback_secret !== undefined) await replaceSecrets(tx, provider, box, { callback_secret: patch.callback_secret });
    provider.updatedAt = new Date();
    // The audit row says that the secret changed, never what to.
    const after = { ...providerView(provider), ...(patch.callback_secret !== undefined ? { secret_changed: true } : {}) };
    recordAudit(tx, actor, { action: 'payment_provider.updated', entityType: 'integration', entityId: id, before, after });
    return provider;
  });
}

export async function updateIntegration(
  em: EntityManager,
  actor: StaffCaller,
  box: SecretBox,
  id: string,
  patch: IntegrationPatch,
): Promise<Integration> {
  return em.transactional(async (tx) => {
    const integration = await findIntegration(tx, id, undefined, true);
    const before = integrationView(integration);
    if (integration.kind === 'psp') {
      if (patch.config !== undefined)
        integration.config = checkPspConfig({ ...integration.config, ...patch.config }) as unknown as Record<string, unknown>;
      if (patch.secrets !== undefined) checkPspSecrets(patch.secrets);
    } else if (patch.config !== undefined) integration.config = patch.config;
    if (patch.name !== undefined) integration.name = patch.name;
    if (patch.enabled !== undefined) integration.enabled = patch.enabled;
    if (patch.secrets !== undefined) await replaceSecrets(tx, integration, box, patch.secrets);
    integration.updatedAt = new Date();
    const after = { ...integrationView(integration), ...(patch.secrets !== undefined ? { secrets_changed: true } : {}) };
    recordAudit(tx, actor, { action: 'integration.updated', entityType: 'integration', entityId: id, before, after });
    return integration;
  });
}

/** Deletes an integration; a provider that deposits name stays (409 PROVIDER_IN_USE): disable it instead. */
export async function deleteIntegration(
  em: EntityManager,
  actor: StaffCaller,
  id: string,
  kind?: IntegrationKind,
): Promise<void> {
  await em.transactional(async (tx) => {
    const integration = await findIntegration(tx, id, kind, true);
    if ((await tx.count(DepositIntent, { provider: id })) > 0)
      throw errors.conflict('PROVIDER_IN_USE', 'Deposits name this provider: disable it (enabled: false) instead of deleting it');
    recordAudit(tx, actor, {
      action: kind === 'psp' ? 'payment_provider.deleted' : 'integration.deleted',
      entityType: 'integration',
      entityId: id,
      before: integrationView(integration),
    });
    tx.remove(integration);
  });
}

/**
 * The keys a callback may be signed with: the current callback secret, and the replaced one
 * while its 24 hours last. Opening a value that cannot be unsealed fails loudly (the box logs and
 * counts it), never as a silent refusal.
 */
export async function callbackSecrets(em: EntityManager, box: SecretBox, integration: Integration): Promise<string[]> {
  await em.populate(integration, ['secretSealed', 'previousSecretSealed']);
  const read = (sealed: string, what: string) =>
    (JSON.parse(box.open(sealed, `${what} of integration ${integration.id}`)) as Record<string, string>).callback_secret;
  const keys = [read(integration.secretSealed, 'the secrets')];
  if (integration.previousSecretSealed && previousSecretValidUntil(integration))
    keys.push(read(integration.previousSecretSealed, 'the previous secrets'));
  return keys.filter((k): k is string => typeof k === 'string');
}

export const PaymentMethodSchema = z.object({
  provider_id: z.uuid(),
  name: z.string(),
  adapter: z.string(),
  currencies: z.array(CurrencyCode).describe("The provider's currencies among those of your accounts"),
  min_amount: MoneyText,
  max_amount: MoneyText,
  fee: ProviderFeeSchema,
});

/** The enabled providers that take at least one currency of the customer's accounts, with those currencies. */
export async function paymentMethods(
  em: EntityManager,
  customerCurrencies: string[],
): Promise<z.output<typeof PaymentMethodSchema>[]> {
  const providers = await em.find(Integration, { kind: 'psp', enabled: true }, { orderBy: { name: 'asc', id: 'asc' } });
  const mine = new Set(customerCurrencies);
  return providers.flatMap((p) => {
    const v = providerView(p);
    const currencies = v.currencies.filter((c) => mine.has(c));
    if (currencies.length === 0) return [];
    return [
      {
        provider_id: v.id,
        name: v.name,
        adapter: v.adapter,
        currencies,
        min_amount: v.min_amount,
        max_amount: v.max_amount,
        fee: v.fee,
      },
    ];
  });
}
