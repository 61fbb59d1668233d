import type { FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Customer } from '../../entities/customer.entity';
import { CHALLENGE_STATUSES, FAILURE_RULES, PropChallenge, type ChallengeStatus } from '../../entities/prop-challenge.entity';
import { PropProgram } from '../../entities/prop-program.entity';
import { executeNamed } from '../../db/bound-statement';
import { findPage, type Paging } from '../../db/find-page';
import { dec, money } from '../../platform/decimal';
import { errors, fieldError } from '../../platform/errors';
import { lockAccounts, openTradingAccount } from '../accounts/accounts';
import { recordAudit } from '../audit/audit';
import type { StaffCaller } from '../../platform/caller';
import { postToLedger } from '../ledger/posting';
import { MoneyText } from '../../platform/money-text';
import type { QuoteStore } from '../prices/quote-store';
import { dailyLossFloor, passTarget, totalLossFloor } from './challenge-rules';
import { STAGES_OF_RUN, TRADING_DAYS } from './prop.queries';

export const ChallengeFailureSchema = z.object({
  rule: z.enum(FAILURE_RULES),
  threshold: z
    .string()
    .describe(
      'For `daily_loss` and `total_loss`, the equity floor that was crossed (money, account currency); for ' +
        '`time_limit`, when the allowed period ended (ISO 8601)',
    ),
  equity: MoneyText,
  balance: MoneyText,
  at: z.iso.datetime(),
});

/** A challenge stage as staff and its trader see it. */
export const ChallengeSchema = z.object({
  id: z.uuid(),
  program_id: z.uuid(),
  customer_id: z.uuid(),
  phase: z.int().describe('1 to the number of phases; the funded stage is the number of phases + 1'),
  status: z.enum(CHALLENGE_STATUSES),
  login: z.int().describe("The stage's own prop account"),
  day_start_equity: MoneyText.describe('The larger of balance and equity at the last day start (00:00 UTC)'),
  high_water_mark: MoneyText.describe('The highest equity seen on this stage; never moves down'),
  trading_days: z.int().describe('UTC days on which an order was opened or closed on the account'),
  failure: ChallengeFailureSchema.nullable().describe('Why it failed; null unless failed'),
  created_at: z.iso.datetime(),
});
export type ChallengeView = z.output<typeof ChallengeSchema>;

/** Days with a trade of each account. */
export async function tradingDaysOf(em: EntityManager, accountIds: string[]): Promise<Map<string, number>> {
  if (accountIds.length === 0) return new Map();
  const rows = await executeNamed<{ account_id: string; days: number }>(
    em,
    TRADING_DAYS.bind({ account_ids: JSON.stringify(accountIds) }),
  );
  return new Map(rows.map((r) => [r.account_id, Number(r.days)]));
}

export function challengeView(c: PropChallenge, tradingDays: number): ChallengeView {
  return {
    id: c.id,
    program_id: c.program.id,
    customer_id: c.customer.id,
    phase: c.phase,
    status: c.status,
    login: Number(c.login),
    day_start_equity: c.dayStartEquity,
    high_water_mark: c.highWaterMark,
    trading_days: tradingDays,
    failure: c.failure ?? null,
    created_at: c.createdAt.toISOString(),
  };
}

export async function challengeViews(em: EntityManager, challenges: PropChallenge[]): Promise<ChallengeView[]> {
  const days = await tradingDaysOf(
    em,
    challenges.map((c) => c.account.id),
  );
  return challenges.map((c) => challengeView(c, days.get(c.account.id) ?? 0));
}

/** Today's UTC date, `YYYY-MM-DD`. */
export function utcDay(at: Date = new Date()): string {
  return at.toISOString().slice(0, 10);
}

/**
 * Starts a stage in the caller's transaction: a new `prop` account of the program's group and
 * currency, funded with the initial balance by a `challenge_funding` ledger row, and its
 * challenge row (`active` for a phase, `funded` after the last), the phase's rules copied in.
 * Day start equity and the high-water mark start at the initial balance.
 */
export async function startStage(
  tx: EntityManager,
  quotes: QuoteStore,
  program: PropProgram,
  customer: Customer,
  phase: number,
  previous: PropChallenge | null,
): Promise<PropChallenge> {
  const rules = program.phases[Math.min(phase, program.phases.length) - 1]!;
  const funded = phase > program.phases.length;
  const account = await openTradingAccount(tx, quotes, customer, {
    kind: 'prop',
    group_id: program.group.id,
    currency: program.currency,
  });
  const locked = (await lockAccounts(tx, [account.id])).get(account.id)!;
  const initial = money(program.initialBalance);
  const now = new Date();
  const status: ChallengeStatus = funded ? 'funded' : 'active';
  const challenge = tx.create(PropChallenge, {
    program,
    customer,
    account: locked,
    login: locked.login,
    phase,
    status,
    initialBalance: initial.toFixed(2),
    profitTargetPct: rules.profit_target_pct,
    maxDailyLossPct: rules.max_daily_loss_pct,
    maxTotalLossPct: rules.max_total_loss_pct,
    totalLossMode: rules.total_loss_mode,
    minTradingDays: rules.min_trading_days,
    maxTradingDays: funded ? null : rules.max_trading_days,
    endsAt: !funded && rules.max_trading_days ? new Date(now.getTime() + rules.max_trading_days * 86_400_000) : null,
    dayStartEquity: initial.toFixed(2),
    dayStartDate: utcDay(now),
    highWaterMark: initial.toFixed(2),
    previous,
    createdAt: now,
  });
  postToLedger(
    tx,
    locked,
    initial,
    'challenge_funding',
    { type: 'prop_challenge', id: challenge.id },
    funded ? `Funded account of program ${program.name}` : `Phase ${phase} of program ${program.name}`,
  );
  await tx.flush();
  return challenge;
}

/**
 * POST /prop/challenges: starts phase 1 of a program for a customer. A program or customer that
 * does not exist is 422 at its field. Audited, in one transaction with the account and its funding.
 */
export async function startChallenge(
  em: EntityManager,
  quotes: QuoteStore,
  actor: StaffCaller,
  input: { program_id: string; customer_id: string },
): Promise<ChallengeView> {
  const program = await em.findOne(PropProgram, input.program_id);
  if (!program) throw fieldError('body', ['program_id'], 'No such program');
  const customer = await em.findOne(Customer, input.customer_id);
  if (!customer) throw fieldError('body', ['customer_id'], 'No such customer');
  return em.transactional(async (tx) => {
    const challenge = await startStage(tx, quotes, program, customer, 1, null);
    const view = challengeView(challenge, 0);
    recordAudit(tx, actor, {
      action: 'prop_challenge.started',
      entityType: 'prop_challenge',
      entityId: challenge.id,
      after: view,
    });
    return view;
  });
}

/** The rules a stage is judged by, as copied from its program's phase when it started. */
export const ChallengeRulesSchema = z.object({
  initial_balance: MoneyText,
  profit_target_pct: z.number(),
  max_daily_loss_pct: z.number(),
  max_total_loss_pct: z.number(),
  total_loss_mode: z.enum(['static', 'trailing']),
  min_trading_days: z.int(),
  max_trading_days: z.int().nullable().describe('Null: no time limit (and on the funded stage)'),
  ends_at: z.iso.datetime().nullable().describe('When the phase fails on time (`time_limit`); null without a time limit'),
});

/** The figures the rules compare equity and balance with, from the stage's stored marks. */
export const ChallengeLimitsSchema = z.object({
  daily_loss_floor: MoneyText.describe('day_start_equity - initial_balance x max_daily_loss_pct / 100: equity below it breaches'),
  total_loss_floor: MoneyText.describe(
    '`static`: initial_balance x (1 - max_total_loss_pct / 100); `trailing`: high_water_mark - initial_balance x ' +
      'max_total_loss_pct / 100. Equity below it breaches',
  ),
  profit_target_balance: MoneyText.describe(
    'initial_balance x (1 + profit_target_pct / 100): the balance at which the phase passes, with nothing open and ' +
      'min_trading_days reached',
  ),
});

/** One stage of the same run of a challenge, phase 1 to the funded stage. */
export const ChallengeStageSchema = z.object({
  id: z.uuid(),
  phase: z.int(),
  status: z.enum(CHALLENGE_STATUSES),
  login: z.int(),
  created_at: z.iso.datetime(),
});

/** A stage as staff read it alone: its view, its rules and limits, and every stage of its run. */
export const ChallengeDetailSchema = ChallengeSchema.extend({
  rules: ChallengeRulesSchema,
  limits: ChallengeLimitsSchema.describe(
    'As the rules judge the stage from its stored marks; a failed stage keeps the marks of its breach, and ' +
      '`failure.threshold` is the floor it crossed',
  ),
  stages: z
    .array(ChallengeStageSchema)
    .describe('Every stage of this run of the challenge, phase 1 first: the stages before this one and after it'),
});
export type ChallengeDetail = z.output<typeof ChallengeDetailSchema>;

function rulesOf(c: PropChallenge): z.output<typeof ChallengeRulesSchema> {
  return {
    initial_balance: c.initialBalance,
    profit_target_pct: Number(c.profitTargetPct),
    max_daily_loss_pct: Number(c.maxDailyLossPct),
    max_total_loss_pct: Number(c.maxTotalLossPct),
    total_loss_mode: c.totalLossMode,
    min_trading_days: c.minTradingDays,
    max_trading_days: c.maxTradingDays ?? null,
    ends_at: c.endsAt?.toISOString() ?? null,
  };
}

function limitsOf(c: PropChallenge): z.output<typeof ChallengeLimitsSchema> {
  const input = {
    initial_balance: c.initialBalance,
    day_start_equity: c.dayStartEquity,
    high_water_mark: c.highWaterMark,
    max_daily_loss_pct: c.maxDailyLossPct,
    max_total_loss_pct: c.maxTotalLossPct,
    total_loss_mode: c.totalLossMode,
  };
  return {
    daily_loss_floor: dailyLossFloor(input).toFixed(2),
    // The mark is what the floor trails: judged at the mark itself, it does not move it.
    total_loss_floor: totalLossFloor(input, dec(c.highWaterMark)).toFixed(2),
    profit_target_balance: passTarget({
      initial_balance: c.initialBalance,
      profit_target_pct: c.profitTargetPct,
      min_trading_days: c.minTradingDays,
    }).toFixed(2),
  };
}

/** One challenge for staff, with its rules, limits and the stages of its run; 404 when none. */
export async function getChallenge(em: EntityManager, id: string): Promise<ChallengeDetail> {
  const challenge = await em.findOne(PropChallenge, id);
  if (!challenge) throw errors.notFound('Challenge');
  const [view] = await challengeViews(em, [challenge]);
  const stages = await executeNamed<{ id: string; phase: number; status: ChallengeStatus; login: string; created_at: string }>(
    em,
    STAGES_OF_RUN.bind({ id }),
  );
  return {
    ...view!,
    rules: rulesOf(challenge),
    limits: limitsOf(challenge),
    stages: stages.map((s) => ({
      id: s.id,
      phase: Number(s.phase),
      status: s.status,
      login: Number(s.login),
      created_at: s.created_at,
    })),
  };
}

export interface ChallengeFilter {
  status?: ChallengeStatus | undefined;
  program_id?: string | undefined;
  customer_id?: string | undefined;
  login?: number | undefined;
}

/** Staff's list of challenge stages, newest first, filtered; one page, counted in one snapshot. */
export async function listChallenges(em: EntityManager, filter: ChallengeFilter, paging: Paging) {
  const where: FilterQuery<PropChallenge> = {};
  if (filter.status) where.status = filter.status;
  if (filter.program_id) where.program = filter.program_id;
  if (filter.customer_id) where.customer = filter.customer_id;
  if (filter.login !== undefined) where.login = String(filter.login);
  const page = await findPage(em, PropChallenge, where, paging, { orderBy: { createdAt: 'desc', id: 'desc' } }, (c) => c);
  return { ...page, items: await challengeViews(em, page.items) };
}

/** A customer's challenge stages, newest first. */
export async function customerChallenges(em: EntityManager, customerId: string): Promise<ChallengeView[]> {
  const found = await em.find(PropChallenge, { customer: customerId }, { orderBy: { createdAt: 'desc', id: 'desc' } });
  return challengeViews(em, found);
}

/**
 * What a payout needs to know of a prop account's challenge: none (a prop account opened by
 * hand pays out its whole profit), or its stage's status and the program's profit split.
 */
export async function challengeTermsOf(
  em: EntityManager,
  accountId: string,
): Promise<{ status: ChallengeStatus; profitSplitPct: string } | null> {
  const challenge = await em.findOne(PropChallenge, { account: accountId }, { populate: ['program'] });
  if (!challenge) return null;
  return { status: challenge.status, profitSplitPct: challenge.program.getEntity().profitSplitPct };
}
