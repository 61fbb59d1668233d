import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { DepositIntent } from '../../entities/deposit-intent.entity';
import { Integration, type IntegrationKind } from '../../entities/integration.entity';
import { dec } from '../../platform/decimal';
import { errors, fieldError } from '../../platform/errors';
import type { SecretBox } from '../../platform/secret-box';
import { recordAudit } from '../audit/audit';
import type { StaffCaller } from '../../platform/caller';
import { CurrencyCode, MoneyText } from '../../platform/money-text';
import { previousSecretValidUntil, rotateSealedSecret } from '../../platform/rotating-secret';
import { secretProblem } from '../webhooks/signature';
import { PSP_ADAPTERS } from './adapters';
import {
  IntegrationCreate,
  IntegrationPatch,
  ProviderCreate,
  ProviderFeeSchema,
  ProviderPatch,
  PspConfigSchema,
  integrationView,
  providerView,
  pspConfig,
  type PspConfig,
} from './integration-views';

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
  // A payment provider's key is `callback_secret`; a KYC provider's registry entry may name it as its vendor does.
  const read = (sealed: string, what: string) => {
    const s = JSON.parse(box.open(sealed, `${what} of integration ${integration.id}`)) as Record<string, string | undefined>;
    return s.callback_secret ?? s.webhook_secret ?? s.secret;
  };
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
