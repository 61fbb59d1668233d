import type { EntityManager } from '@mikro-orm/postgresql';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { executeNamed } from '../../db/bound-statement';
import { Customer } from '../../entities/customer.entity';
import { IbPlan, Partner } from '../../entities/partner.entity';
import type { StaffCaller } from '../../platform/caller';
import { customerScopeOf, inScope, inScopeOr404, seesEveryCustomer } from '../../platform/customer-scope';
import { errors, fieldError } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import { recordEvent } from '../events/outbox';
import { MAX_LEVELS } from './plans';
import { ALL_DEPTHS, ANCESTORS, PARTNER_BY_REF, SUBTREE } from './partners.queries';

/** A partner code: letters, digits and dashes, 4 to 32, kept in upper case (clients type it in any case). */
export const PartnerCode = z
  .string()
  .regex(/^[A-Za-z0-9-]{4,32}$/, '4 to 32 letters, digits or dashes')
  .transform((s) => s.toUpperCase());

export const PartnerInputSchema = z.strictObject({
  customer_id: z.uuid(),
  parent_partner_id: z.uuid().nullable().optional(),
  plan_id: z.uuid(),
  code: PartnerCode.optional().describe('Generated when absent; unique whatever its case'),
});

export const PartnerPatchSchema = z.strictObject({
  parent_partner_id: z.uuid().nullable().optional().describe('null makes the partner a top one'),
  plan_id: z.uuid().optional(),
});

export const PartnerSchema = z.object({
  id: z.uuid(),
  customer_id: z.uuid(),
  parent_partner_id: z.uuid().nullable(),
  plan_id: z.uuid(),
  code: z.string(),
  level: z.int().describe('Depth in the tree: 1 for a partner with no parent'),
  created_at: z.iso.datetime(),
});
export type PartnerView = z.output<typeof PartnerSchema>;

async function depthOf(em: EntityManager, partnerId: string): Promise<number> {
  return (await executeNamed<{ id: string; depth: number }>(em, ANCESTORS.bind({ partner_id: partnerId }))).length;
}

function viewOf(p: Partner): Omit<PartnerView, 'level'> {
  return {
    id: p.id,
    customer_id: p.customerId,
    parent_partner_id: p.parentPartnerId ?? null,
    plan_id: p.planId,
    code: p.code,
    created_at: p.createdAt.toISOString(),
  };
}

export async function partnerView(em: EntityManager, p: Partner): Promise<PartnerView> {
  return { ...viewOf(p), level: await depthOf(em, p.id) };
}

function generatedCode(): string {
  // 10 characters of an alphabet without look-alikes (0/O, 1/I): about 50 bits.
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  return [...randomBytes(10)].map((b) => alphabet[b % alphabet.length]).join('');
}

/** A partner staff may see: the one of a customer in their scope (else 404). */
export async function visiblePartner(em: EntityManager, caller: StaffCaller, id: string): Promise<Partner> {
  return inScopeOr404(em, customerScopeOf(caller), await em.findOne(Partner, id), (p) => p.customerId, 'Partner');
}

async function parentFor(em: EntityManager, parentId: string): Promise<Partner> {
  const parent = await em.findOne(Partner, parentId);
  if (!parent) throw fieldError('body', ['parent_partner_id'], 'No such partner');
  return parent;
}

async function planFor(em: EntityManager, planId: string): Promise<void> {
  if (!(await em.findOne(IbPlan, planId))) throw fieldError('body', ['plan_id'], 'No such plan');
}

/** Makes a customer an introducing broker. A customer is at most one partner; a code is unique. */
export async function createPartner(
  em: EntityManager,
  actor: StaffCaller,
  input: z.output<typeof PartnerInputSchema>,
): Promise<PartnerView> {
  const customer = await em.findOne(Customer, input.customer_id);
  if (!customer || !(await inScope(em, customerScopeOf(actor), customer.id)))
    throw fieldError('body', ['customer_id'], 'No such customer');
  await planFor(em, input.plan_id);
  if (await em.findOne(Partner, { customerId: customer.id }))
    throw errors.conflict('PARTNER_EXISTS', 'This customer is a partner already');
  if (input.parent_partner_id) {
    await parentFor(em, input.parent_partner_id);
    if ((await depthOf(em, input.parent_partner_id)) >= MAX_LEVELS)
      throw fieldError('body', ['parent_partner_id'], `The partner tree is at most ${MAX_LEVELS} levels deep`);
  }
  const code = input.code ?? generatedCode();
  if (await em.findOne(Partner, { code })) throw errors.conflict('PARTNER_CODE_TAKEN', 'This partner code is taken');
  const partner = em.create(Partner, {
    customerId: customer.id,
    parentPartnerId: input.parent_partner_id ?? null,
    planId: input.plan_id,
    code,
  });
  await em.flush();
  const view = await partnerView(em, partner);
  recordAudit(em, actor, { action: 'partner.created', entityType: 'partner', entityId: partner.id, after: view });
  recordEvent(em, {
    type: 'partner.created',
    aggregateType: 'partner',
    aggregateId: partner.id,
    customerId: customer.id,
    data: view,
  });
  await em.flush();
  return view;
}

/**
 * Moves a partner in the tree or changes its plan. A parent inside the partner's own subtree
 * (itself included) would make a cycle: 409 PARTNER_CYCLE. The move may not take the deepest
 * partner below it past 10 levels.
 */
export async function updatePartner(
  em: EntityManager,
  actor: StaffCaller,
  id: string,
  input: z.output<typeof PartnerPatchSchema>,
): Promise<PartnerView> {
  const partner = await visiblePartner(em, actor, id);
  const before = await partnerView(em, partner);
  if (input.plan_id !== undefined) {
    await planFor(em, input.plan_id);
    partner.planId = input.plan_id;
  }
  if (input.parent_partner_id !== undefined) {
    if (input.parent_partner_id !== null) {
      await parentFor(em, input.parent_partner_id);
      const below = await executeNamed<{ id: string; depth: number }>(em, SUBTREE.bind({ partner_id: id }));
      if (below.some((b) => b.id === input.parent_partner_id))
        throw errors.conflict('PARTNER_CYCLE', 'The new parent is this partner or one below it: the tree would loop');
      const height = Math.max(...below.map((b) => b.depth));
      if ((await depthOf(em, input.parent_partner_id)) + 1 + height > MAX_LEVELS)
        throw fieldError('body', ['parent_partner_id'], `The partner tree is at most ${MAX_LEVELS} levels deep`);
    }
    partner.parentPartnerId = input.parent_partner_id;
  }
  partner.updatedAt = new Date();
  await em.flush();
  const view = await partnerView(em, partner);
  recordAudit(em, actor, { action: 'partner.updated', entityType: 'partner', entityId: id, before, after: view });
  await em.flush();
  return view;
}

export async function listPartners(
  em: EntityManager,
  actor: StaffCaller,
  filter: { parent_partner_id?: string | undefined },
): Promise<PartnerView[]> {
  const where = filter.parent_partner_id ? { parentPartnerId: filter.parent_partner_id } : {};
  const rows = await em.find(Partner, where, { orderBy: { createdAt: 'asc', id: 'asc' }, limit: 1000 });
  const scope = customerScopeOf(actor);
  const depths = new Map(
    (await executeNamed<{ id: string; depth: number }>(em, ALL_DEPTHS.bind({}))).map((d) => [d.id, d.depth]),
  );
  const out: PartnerView[] = [];
  for (const p of rows)
    if (seesEveryCustomer(scope) || (await inScope(em, scope, p.customerId)))
      out.push({ ...viewOf(p), level: depths.get(p.id) ?? 1 });
  return out;
}

/** A partner by its code (any case) or id, or null: what a `ref`, a lead's code or a promo code names. */
export async function resolvePartner(
  em: EntityManager,
  ref: string,
): Promise<{ id: string; code: string; customerId: string } | null> {
  const [row] = await executeNamed<{ id: string; code: string; customer_id: string }>(
    em,
    PARTNER_BY_REF.bind({ ref: ref.trim() }),
  );
  return row ? { id: row.id, code: row.code, customerId: row.customer_id } : null;
}

/**
 * Attributes a customer to a partner by staff (null removes it): `affiliate_id` follows the
 * partner's code, so webhooks filtered on it keep their meaning. Once the customer has made
 * its first deposit, moving it needs `manage_partners` and a reason, as that moves money to
 * come. A partner's own customer record is never attributed to itself.
 */
export async function attributeByStaff(
  em: EntityManager,
  actor: StaffCaller,
  customer: Customer,
  partnerId: string | null,
  reason: string | undefined,
): Promise<void> {
  if ((customer.partnerId ?? null) === partnerId) return;
  if (customer.ftdAt) {
    if (!actor.permissions.has('manage_partners'))
      throw errors.forbidden('Attributing a customer after its first deposit needs the permission manage_partners');
    if (!reason) throw fieldError('body', ['reason'], 'Attributing a customer after its first deposit needs a reason');
  }
  let code: string | null = null;
  if (partnerId !== null) {
    const partner = await em.findOne(Partner, partnerId);
    if (!partner) throw fieldError('body', ['partner_id'], 'No such partner');
    if (partner.customerId === customer.id) throw fieldError('body', ['partner_id'], 'A partner is not its own client');
    code = partner.code;
  }
  const before = { partner_id: customer.partnerId ?? null, affiliate_id: customer.affiliateId ?? null };
  customer.partnerId = partnerId;
  customer.affiliateId = code;
  customer.updatedAt = new Date();
  recordAudit(em, actor, {
    action: 'customer.partner_changed',
    entityType: 'customer',
    entityId: customer.id,
    before,
    after: { partner_id: partnerId, affiliate_id: code, ...(reason ? { reason } : {}) },
  });
}
