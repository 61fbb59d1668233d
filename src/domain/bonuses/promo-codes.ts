import type { EntityManager } from '@mikro-orm/postgresql';
import { randomInt } from 'node:crypto';
import { z } from 'zod';
import { BonusProgram } from '../../entities/bonus-program.entity';
import { Campaign } from '../../entities/campaign.entity';
import { Customer } from '../../entities/customer.entity';
import { PromoCode } from '../../entities/promo-code.entity';
import { PromoRedemption, REDEMPTION_STATUSES } from '../../entities/promo-redemption.entity';
import type { RunBound } from '../../db/bound-transaction';
import { executeBoundInTransaction } from '../../db/bound-statement';
import { D, dec, money, type Dec } from '../../platform/decimal';
import { AppError, errors, fieldError } from '../../platform/errors';
import { MoneyText } from '../../platform/money-text';
import type { StaffCaller } from '../../platform/caller';
import { recordAudit } from '../audit/audit';
import { Moment } from './moment';
import { grantAmount, ineligible } from './bonuses';
import { DEPOSIT_COUNT, LOCK_ACCOUNT, LOCK_CUSTOMER_ACCOUNT, type BonusAccountRow, type ProgramTerms } from './bonus-statements';
import {
  LOCK_CODE,
  FIND_CODE,
  LOCK_CAMPAIGN,
  FIND_CAMPAIGN,
  CUSTOMER_USES,
  FIRST_ELIGIBLE_ACCOUNT,
  PROGRAM_TERMS,
  CodeRow,
  CampaignRow,
} from './promo-statements';

/**
 * Campaigns and promo codes, and the checks of a redeem (promo-redeem.ts). A redeem locks the
 * code's row (and its campaign's), so every limit (the code's max_redemptions, the customer's
 * max_per_customer, the campaign's usage or spend budget) is counted by one redeem at a time
 * and consumed in the transaction of the grant: N parallel redeems of the last use give
 * exactly one redemption.
 */

const CODE = /^[A-Z0-9-]{4,32}$/;

// --- campaigns -------------------------------------------------------------------------

export const CampaignInputSchema = z.strictObject({
  name: z.string().min(1).max(200),
  starts_at: Moment,
  ends_at: Moment,
  budget: z.strictObject({ type: z.enum(['usage', 'spend']), limit: z.number().positive().max(1e12) }).optional(),
});

export const CampaignSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  starts_at: z.iso.datetime(),
  ends_at: z.iso.datetime(),
  budget: z.object({ type: z.enum(['usage', 'spend']), limit: z.string(), used: z.string() }).nullable(),
  created_at: z.iso.datetime(),
});

export function campaignView(c: Campaign): z.output<typeof CampaignSchema> {
  return {
    id: c.id,
    name: c.name,
    starts_at: c.startsAt.toISOString(),
    ends_at: c.endsAt.toISOString(),
    budget: c.budgetType
      ? { type: c.budgetType, limit: dec(c.budgetLimit!).toString(), used: dec(c.budgetUsed).toString() }
      : null,
    created_at: c.createdAt.toISOString(),
  };
}

export async function createCampaign(em: EntityManager, actor: StaffCaller, input: z.output<typeof CampaignInputSchema>) {
  if (new Date(input.ends_at) <= new Date(input.starts_at))
    throw fieldError('body', ['ends_at'], 'ends_at must be after starts_at');
  const c = em.create(Campaign, {
    name: input.name,
    startsAt: new Date(input.starts_at),
    endsAt: new Date(input.ends_at),
    budgetType: input.budget?.type ?? null,
    budgetLimit: input.budget ? money(input.budget.limit).toFixed(2) : null,
  });
  const view = campaignView(c);
  recordAudit(em, actor, { action: 'campaign.created', entityType: 'campaign', entityId: c.id, after: view });
  await em.flush();
  return view;
}

// --- codes -----------------------------------------------------------------------------

export const PromoCodeInputSchema = z.strictObject({
  code: z
    .string()
    .transform((s) => s.toUpperCase())
    .pipe(z.string().regex(CODE, 'Letters, digits and hyphens, 4 to 32'))
    .optional(),
  campaign_id: z.uuid().optional(),
  reward: z.strictObject({ type: z.literal('bonus'), bonus_program_id: z.uuid() }),
  max_redemptions: z.int().positive().max(1e9).optional(),
  max_per_customer: z.int().positive().max(1e6).default(1),
  expires_at: Moment.optional(),
  first_deposit_only: z.boolean().default(false),
  min_deposit: z.number().positive().max(1e12).optional(),
  countries: z
    .array(z.string().regex(/^[A-Z]{2}$/))
    .max(300)
    .optional(),
  partner_id: z.string().min(1).max(64).optional(),
});

export const PromoCodeSchema = z.object({
  id: z.uuid(),
  code: z.string(),
  campaign_id: z.uuid().nullable(),
  reward: z.object({ type: z.literal('bonus'), bonus_program_id: z.uuid() }),
  max_redemptions: z.int().nullable(),
  redemptions: z.int(),
  max_per_customer: z.int(),
  expires_at: z.iso.datetime().nullable(),
  first_deposit_only: z.boolean(),
  min_deposit: MoneyText.nullable(),
  countries: z.array(z.string()).nullable(),
  partner_id: z.string().nullable(),
  active: z.boolean(),
  created_at: z.iso.datetime(),
});

export function promoCodeView(p: PromoCode): z.output<typeof PromoCodeSchema> {
  return {
    id: p.id,
    code: p.code,
    campaign_id: p.campaignId ?? null,
    reward: { type: 'bonus', bonus_program_id: p.bonusProgramId },
    max_redemptions: p.maxRedemptions ?? null,
    redemptions: p.redemptions,
    max_per_customer: p.maxPerCustomer,
    expires_at: p.expiresAt ? p.expiresAt.toISOString() : null,
    first_deposit_only: p.firstDepositOnly,
    min_deposit: p.minDeposit ? dec(p.minDeposit).toFixed(2) : null,
    countries: p.countries ?? null,
    partner_id: p.partnerId ?? null,
    active: p.active,
    created_at: p.createdAt.toISOString(),
  };
}

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
function generatedCode(): string {
  return Array.from({ length: 10 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
}

export async function createPromoCode(em: EntityManager, actor: StaffCaller, input: z.output<typeof PromoCodeInputSchema>) {
  if (!(await em.findOne(BonusProgram, input.reward.bonus_program_id)))
    throw fieldError('body', ['reward', 'bonus_program_id'], 'No such bonus programme');
  if (input.campaign_id && !(await em.findOne(Campaign, input.campaign_id)))
    throw fieldError('body', ['campaign_id'], 'No such campaign');
  const code = input.code ?? generatedCode();
  if (await em.findOne(PromoCode, { code, active: true }))
    throw errors.conflict('PROMO_CODE_TAKEN', `An active code ${code} exists already`);
  const p = em.create(PromoCode, {
    code,
    campaignId: input.campaign_id ?? null,
    bonusProgramId: input.reward.bonus_program_id,
    maxRedemptions: input.max_redemptions ?? null,
    maxPerCustomer: input.max_per_customer,
    expiresAt: input.expires_at ? new Date(input.expires_at) : null,
    firstDepositOnly: input.first_deposit_only,
    minDeposit: input.min_deposit === undefined ? null : money(input.min_deposit).toFixed(2),
    countries: input.countries ?? null,
    partnerId: input.partner_id ?? null,
  });
  const view = promoCodeView(p);
  recordAudit(em, actor, { action: 'promo_code.created', entityType: 'promo_code', entityId: p.id, after: view });
  await em.flush();
  return view;
}

/** PATCH /api/crm/promo-codes/{id}: deactivates (or reactivates) a code; a used code is never deleted. */
export async function setPromoCodeActive(em: EntityManager, actor: StaffCaller, id: string, active: boolean) {
  const p = await em.findOne(PromoCode, id);
  if (!p) throw errors.notFound('Promo code');
  const before = promoCodeView(p);
  if (active && !p.active && (await em.findOne(PromoCode, { code: p.code, active: true })))
    throw errors.conflict('PROMO_CODE_TAKEN', `An active code ${p.code} exists already`);
  p.active = active;
  const view = promoCodeView(p);
  recordAudit(em, actor, { action: 'promo_code.updated', entityType: 'promo_code', entityId: p.id, before, after: view });
  await em.flush();
  return view;
}

// --- validate and redeem ---------------------------------------------------------------

export const RedemptionSchema = z.object({
  id: z.uuid(),
  code: z.string(),
  status: z
    .enum(REDEMPTION_STATUSES)
    .describe(
      '`applied` (bonus granted), `armed` (its bonus `pending` until the qualifying deposit), `on_hold` (held for a ' +
        'fraud review), `expired` (the code expired while armed), `void` (voided by a fraud case, or its bonus ended ' +
        'before it was granted)',
    ),
  bonus_id: z.uuid().optional().describe('The bonus of the redemption (pending, held or granted)'),
});

export const PromoPreviewSchema = z.object({
  code: z.string(),
  reward: z.object({
    type: z.literal('bonus'),
    bonus_program_id: z.uuid(),
    name: z.string(),
    currency: z.string(),
    amount: MoneyText.nullable().describe('The bonus granted (null: a percentage of the qualifying deposit)'),
    percent: z.string().nullable(),
  }),
  status: z.enum(['applied', 'armed']).describe('What a redeem would give now'),
});

const notFound = () => new AppError(404, 'PROMO_CODE_NOT_FOUND', 'No such promo code');
const expired = () => new AppError(409, 'PROMO_CODE_EXPIRED', 'This promo code has expired');
const exhausted = () => new AppError(409, 'PROMO_CODE_EXHAUSTED', 'This promo code has no uses left');
const alreadyUsed = () => new AppError(409, 'PROMO_CODE_ALREADY_USED', 'You have already used this promo code');
const notEligible = (why: string) => new AppError(403, 'PROMO_NOT_ELIGIBLE', why);

export interface Decision {
  code: CodeRow;
  campaign: CampaignRow | null;
  program: ProgramTerms;
  account: BonusAccountRow | null;
  armed: boolean;
  amount: Dec;
}

/**
 * Every check of a redeem, in the order the errors are given; `lock` reads the code and its
 * campaign for update (redeem) or plainly (validate, which reserves nothing).
 */
export async function decide(
  run: RunBound,
  em: EntityManager,
  customerId: string,
  input: { code: string; login?: number },
  lock: boolean,
): Promise<Decision> {
  const text = input.code.trim().toUpperCase();
  if (!CODE.test(text)) throw notFound();
  const [code] = await run<CodeRow>((lock ? LOCK_CODE : FIND_CODE).bind({ code: text }));
  if (!code) throw notFound();
  const [campaign] = code.campaign_id
    ? await run<CampaignRow>((lock ? LOCK_CAMPAIGN : FIND_CAMPAIGN).bind({ id: code.campaign_id }))
    : [];
  const now = Date.now();
  if (campaign && new Date(campaign.starts_at).getTime() > now) throw notFound();
  if (code.expires_at && new Date(code.expires_at).getTime() <= now) throw expired();
  if (campaign && new Date(campaign.ends_at).getTime() <= now) throw expired();
  const [uses] = await run<{ n: number }>(CUSTOMER_USES.bind({ promo_code_id: code.id, customer_id: customerId }));
  if (uses!.n >= code.max_per_customer) throw alreadyUsed();
  if (code.max_redemptions !== null && code.redemptions >= code.max_redemptions) throw exhausted();
  const [program] = await run<ProgramTerms>(PROGRAM_TERMS.bind({ id: code.bonus_program_id }));
  if (!program) throw notFound();
  const customer = await em.findOneOrFail(Customer, customerId);
  if (code.countries && (!customer.country || !code.countries.includes(customer.country)))
    throw notEligible('This promo code is not offered in your country');
  const armed = code.first_deposit_only || code.min_deposit !== null || program.kind === 'deposit_percent';
  if (code.first_deposit_only) {
    const [deposits] = await run<{ n: number }>(DEPOSIT_COUNT.bind({ customer_id: customerId }));
    if (deposits!.n > 0) throw notEligible('This promo code is for a first deposit, and you have made one');
  }
  let account: BonusAccountRow | null = null;
  if (input.login !== undefined) {
    const [own] = await run<BonusAccountRow>(LOCK_CUSTOMER_ACCOUNT.bind({ customer_id: customerId, login: String(input.login) }));
    if (!own) throw errors.notFound('Account');
    const why = ineligible(program, own);
    if (why) throw notEligible(why);
    account = own;
  } else {
    for (const { id } of await run<{ id: string }>(FIRST_ELIGIBLE_ACCOUNT.bind({ customer_id: customerId }))) {
      const [candidate] = await run<BonusAccountRow>(LOCK_ACCOUNT.bind({ account_id: id }));
      if (candidate && !ineligible(program, candidate)) {
        account = candidate;
        break;
      }
    }
    if (!account && !armed) throw notEligible('None of your accounts can take this bonus');
  }
  if (!program.enabled) throw notEligible('This promotion is over');
  const amount = armed ? new D(0) : grantAmount(program, null);
  if (campaign?.budget_type === 'usage' && dec(campaign.budget_used).plus(1).gt(campaign.budget_limit!)) throw exhausted();
  if (campaign?.budget_type === 'spend') {
    // An armed code's amount is known only at its deposit: it needs some budget left now.
    const need = armed ? new D('0.01') : amount;
    if (dec(campaign.budget_used).plus(need).gt(campaign.budget_limit!)) throw exhausted();
  }
  return { code, campaign: campaign ?? null, program, account, armed, amount };
}

/** POST /customers/me/promo-codes/validate: the reward preview, or redeem's error; reserves nothing. */
export async function validatePromoCode(em: EntityManager, customerId: string, input: { code: string }) {
  return em.transactional(async (tx) => {
    const run: RunBound = (s) => executeBoundInTransaction(tx, s);
    const d = await decide(run, tx, customerId, input, false);
    return {
      code: d.code.code,
      reward: {
        type: 'bonus' as const,
        bonus_program_id: d.program.id,
        name: d.program.name,
        currency: d.program.currency,
        amount: d.program.kind === 'fixed' ? dec(d.program.amount!).toFixed(2) : null,
        percent: d.program.percent ? dec(d.program.percent).toString() : null,
      },
      status: d.armed ? ('armed' as const) : ('applied' as const),
    };
  });
}

export async function redemptionsOf(em: EntityManager, customerId: string) {
  return em.find(PromoRedemption, { customerId }, { orderBy: { createdAt: 'desc' }, limit: 500 });
}
