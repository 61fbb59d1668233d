import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { executeNamed } from '../../db/bound-statement';
import { IbPlan, Partner } from '../../entities/partner.entity';
import { CalendarDate } from '../../platform/calendar-date';
import { dec } from '../../platform/decimal';
import { errors, fieldError } from '../../platform/errors';
import { MoneyText } from '../../platform/money-text';
import { maskEmail } from '../../platform/pii';
import { IbPlanSchema, planView } from './plans';
import { partnerView } from './partners';
import { PARTNER_CLIENTS, PARTNER_REWARDS, PARTNER_TOTALS, SUB_PARTNERS } from './partners.queries';
import { ACCRUAL_STATUSES } from '../../entities/partner.entity';

/**
 * The partner portal over the customer API: a partner sees its code, plan, level and totals,
 * its clients (masked, never their balances), its rewards and the partners below it. A
 * customer who is not a partner gets 404 on all of it, as for anything it does not own.
 */

export async function ownPartner(em: EntityManager, customerId: string): Promise<Partner> {
  const partner = await em.findOne(Partner, { customerId });
  if (!partner) throw errors.notFound('Partner');
  return partner;
}

export const PartnerTotalsSchema = z.object({
  clients: z.int(),
  sub_partners: z.int().describe('Partners directly below'),
  paid: MoneyText.describe('Rewards paid into the wallet'),
  pending: MoneyText.describe('Accrued on a daily plan, paid by the next end of day'),
  on_hold: MoneyText.describe('Held while a fraud case about the client or the partner is open'),
  reversed: MoneyText.describe('Taken back (a charge-back, or a fraud verdict)'),
});

export const PartnerSummarySchema = z.object({
  id: z.uuid(),
  code: z.string(),
  level: z.int().describe('Depth in the tree: 1 for a partner with no parent'),
  parent_partner_id: z.uuid().nullable(),
  plan: IbPlanSchema,
  totals: PartnerTotalsSchema,
});

export async function partnerSummary(em: EntityManager, customerId: string): Promise<z.output<typeof PartnerSummarySchema>> {
  const partner = await ownPartner(em, customerId);
  const view = await partnerView(em, partner);
  const plan = await em.findOneOrFail(IbPlan, partner.planId);
  const [t] = await executeNamed<{
    clients: number;
    sub_partners: number;
    paid: string;
    pending: string;
    on_hold: string;
    reversed: string;
  }>(em, PARTNER_TOTALS.bind({ partner_id: partner.id }));
  return {
    id: partner.id,
    code: partner.code,
    level: view.level,
    parent_partner_id: view.parent_partner_id,
    plan: planView(plan),
    totals: {
      clients: t!.clients,
      sub_partners: t!.sub_partners,
      paid: dec(t!.paid).toFixed(2),
      pending: dec(t!.pending).toFixed(2),
      on_hold: dec(t!.on_hold).toFixed(2),
      reversed: dec(t!.reversed).toFixed(2),
    },
  };
}

export const PartnerClientSchema = z.object({
  email: z.string().describe('Masked: the first character, `***`, then the domain'),
  country: z.string().nullable(),
  registered_at: z.iso.datetime(),
  ftd_at: z.iso.datetime().nullable().describe('The first deposit; null before it'),
  lots: z.string().describe('Closed lots, all accounts (decimal text)'),
});

export async function partnerClients(em: EntityManager, customerId: string) {
  const partner = await ownPartner(em, customerId);
  const rows = await executeNamed<{ email: string; country: string | null; created_at: Date; ftd_at: Date | null; lots: string }>(
    em,
    PARTNER_CLIENTS.bind({ partner_id: partner.id }),
  );
  return rows.map((r) => ({
    email: maskEmail(r.email),
    country: r.country,
    registered_at: new Date(r.created_at).toISOString(),
    ftd_at: r.ftd_at ? new Date(r.ftd_at).toISOString() : null,
    lots: dec(r.lots).toFixed(2),
  }));
}

const DAY = 86_400_000;

const DayOrInstant = z.union([CalendarDate, z.iso.datetime()]);

export const RewardsQuerySchema = z.object({
  from: DayOrInstant.optional().describe('First day (UTC), inclusive, or an instant; default 30 days before `to`'),
  to: DayOrInstant.optional().describe('Last day (UTC), inclusive, or an instant (exclusive); default today'),
});

/** A day's first instant (for `from`), the instant after a day (for an inclusive `to`), or the instant given. */
function boundOf(value: string, end: boolean): Date {
  if (value.length > 10) return new Date(value);
  const start = new Date(`${value}T00:00:00Z`);
  return end ? new Date(start.getTime() + DAY) : start;
}

export const PartnerRewardSchema = z.object({
  id: z.uuid(),
  ticket: z.string(),
  level: z.int(),
  symbol: z.string(),
  lots: z.string(),
  amount: MoneyText,
  currency: z.string(),
  status: z.enum(ACCRUAL_STATUSES),
  reason: z.string().nullable().describe('Why it is 0 or held: `self_trading`, `short_hold`, `fraud_case`, ...'),
  closed_at: z.iso.datetime(),
  paid_at: z.iso.datetime().nullable(),
});

export async function partnerRewards(em: EntityManager, customerId: string, query: z.output<typeof RewardsQuerySchema>) {
  const partner = await ownPartner(em, customerId);
  const until = boundOf(query.to ?? new Date().toISOString().slice(0, 10), true);
  const from = query.from ? boundOf(query.from, false) : new Date(until.getTime() - 31 * DAY);
  if (from >= until) throw fieldError('query', ['from'], 'from must be before to');
  if (until.getTime() - from.getTime() > 367 * DAY) throw fieldError('query', ['from'], 'At most a year at a time');
  const rows = await executeNamed<{
    id: string;
    ticket: string;
    level: number;
    symbol: string;
    lots: string;
    amount: string;
    currency: string;
    status: (typeof ACCRUAL_STATUSES)[number];
    reason: string | null;
    closed_at: Date;
    paid_at: Date | null;
  }>(em, PARTNER_REWARDS.bind({ partner_id: partner.id, from, to: until }));
  return rows.map((r) => ({
    id: r.id,
    ticket: r.ticket,
    level: r.level,
    symbol: r.symbol,
    lots: dec(r.lots).toFixed(2),
    amount: dec(r.amount).toFixed(2),
    currency: r.currency,
    status: r.status,
    reason: r.reason,
    closed_at: new Date(r.closed_at).toISOString(),
    paid_at: r.paid_at ? new Date(r.paid_at).toISOString() : null,
  }));
}

export const SubPartnerSchema = z.object({
  id: z.uuid(),
  code: z.string(),
  parent_partner_id: z.uuid(),
  depth: z.int().describe('How far below the caller: 1 for a partner directly below'),
  clients: z.int(),
  created_at: z.iso.datetime(),
});

export async function subPartners(em: EntityManager, customerId: string) {
  const partner = await ownPartner(em, customerId);
  const rows = await executeNamed<{
    id: string;
    code: string;
    parent_partner_id: string;
    depth: number;
    clients: number;
    created_at: Date;
  }>(em, SUB_PARTNERS.bind({ partner_id: partner.id }));
  return rows.map((r) => ({ ...r, created_at: new Date(r.created_at).toISOString() }));
}
