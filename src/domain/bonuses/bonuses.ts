import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { BonusProgram } from '../../entities/bonus-program.entity';
import { BONUS_SOURCES, BONUS_STATUSES } from '../../entities/bonus.entity';
import type { RunBound } from '../../db/bound-transaction';
import { executeBoundInTransaction } from '../../db/bound-statement';
import { D, dec, money, type Dec } from '../../platform/decimal';
import { errors, fieldError } from '../../platform/errors';
import { MoneyText } from '../../platform/money-text';
import type { StaffCaller } from '../../platform/caller';
import { randomUUID } from 'node:crypto';
import { currentSignals } from '../../platform/request-signals';
import { recordAudit } from '../audit/audit';
import { evaluateFraudOn, fraudBlocked, type FraudDecision } from '../fraud/evaluate';
import {
  ACTIVE_BONUSES,
  BONUS_BY_ID,
  BONUSES_OF_DEPOSIT,
  CUSTOMER_BONUSES,
  bonusEvent,
  CREDIT_IN,
  CREDIT_OUT,
  DEPOSIT_COUNT,
  DEPOSIT_PROGRAMS,
  EXPIRED_BONUSES,
  INSERT_BONUS,
  LOCK_ACCOUNT,
  LOCK_BONUS,
  LOCK_CUSTOMER_ACCOUNT,
  UPDATE_BONUS,
  VOID_REDEMPTION_OF_BONUS,
  type BonusAccountRow,
  type BonusRow,
  type ProgramTerms,
} from './bonus-statements';
import { LOCK_REDEEM_ACCOUNTS } from './promo-statements';

/**
 * Bonuses: credit granted under a programme, turned into withdrawable balance by trading.
 * Every path here runs in the transaction of what triggers it (a close, a deposit, a transfer
 * out, the end of day, a staff request) with the account row locked first and the account's
 * bonuses after it, and moves credit only through the posting module's statements.
 */

export const BonusSchema = z.object({
  id: z.uuid(),
  program_id: z.uuid(),
  customer_id: z.uuid(),
  login: z
    .int()
    .nullable()
    .describe('The account; null only while a `pending` bonus waits for a qualifying deposit on any eligible account'),
  amount: MoneyText.describe(
    'What the bonus granted (less anything forfeited proportionally by a transfer out); while `pending` on a deposit ' +
      'percentage programme, 0.00 until the qualifying deposit sets it',
  ),
  released: MoneyText.describe('What has moved from credit to balance so far'),
  lots_required: z.string().describe('Lots of counted turnover to release the whole bonus (decimal text)'),
  lots_done: z.string().describe('Lots counted so far (decimal text)'),
  status: z
    .enum(BONUS_STATUSES)
    .describe(
      '`pending`: granted by an armed promo code, no credit until the qualifying deposit; `on_hold`: held for a fraud ' +
        'review, no credit until the case releases it; `active`: credit booked; then `completed`, `expired`, ' +
        '`forfeited` or `cancelled`',
    ),
  expires_at: z.iso.datetime().nullable(),
  source: z.object({ type: z.enum(BONUS_SOURCES), id: z.string().nullable() }),
  end_reason: z.string().nullable(),
  created_at: z.iso.datetime(),
});
export type BonusView = z.output<typeof BonusSchema>;

export const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export function bonusView(b: BonusRow): BonusView {
  return {
    id: b.id,
    program_id: b.program_id,
    customer_id: b.customer_id,
    login: b.login === null ? null : Number(b.login),
    amount: dec(b.amount).toFixed(2),
    released: dec(b.released).toFixed(2),
    lots_required: dec(b.lots_required).toFixed(2),
    lots_done: dec(b.lots_done).toFixed(2),
    status: b.status as BonusView['status'],
    expires_at: iso(b.expires_at),
    source: { type: b.source_type as BonusView['source']['type'], id: b.source_id },
    end_reason: b.end_reason,
    created_at: iso(b.created_at)!,
  };
}

export async function one<T>(run: RunBound, statement: Parameters<RunBound>[0]): Promise<T | undefined> {
  return (await run<T>(statement))[0];
}

export async function reload(run: RunBound, id: string): Promise<BonusRow> {
  return (await one<BonusRow>(run, BONUS_BY_ID.bind({ id })))!;
}

export async function emit(
  run: RunBound,
  type: Parameters<typeof bonusEvent>[0],
  b: BonusRow,
  extra: Record<string, unknown> = {},
) {
  await run(
    bonusEvent(type).bind({ bonus_id: b.id, customer_id: b.customer_id, data: JSON.stringify({ ...bonusView(b), ...extra }) }),
  );
}

/** Books `amount` (> 0) into or out of the account's credit, with its row and account.credit_changed. */
export async function moveCredit(
  run: RunBound,
  accountId: string,
  direction: 'in' | 'out',
  amount: Dec,
  reason: string,
  bonusId: string,
  comment: string | null,
): Promise<void> {
  if (amount.lte(0)) return;
  const statement = direction === 'in' ? CREDIT_IN : CREDIT_OUT;
  await run(
    statement.bind({
      account_id: accountId,
      delta: (direction === 'in' ? amount : amount.neg()).toFixed(2),
      direction,
      reason,
      reference_type: 'bonus',
      reference_id: bonusId,
      comment,
    }),
  );
}

/** The account's credit as it stands now (locked by the caller). */
export async function creditOf(run: RunBound, accountId: string): Promise<Dec> {
  return dec((await one<BonusAccountRow>(run, LOCK_ACCOUNT.bind({ account_id: accountId })))!.credit);
}

/** What of a bonus is still credit: its unreleased part, never more than the account holds. */
export function unreleased(b: BonusRow, credit: Dec): Dec {
  return D.max(D.min(dec(b.amount).minus(b.released), credit), 0);
}

// --- programmes ------------------------------------------------------------------------

/** What a programme grants on a deposit of `deposit` (or its fixed amount), capped at max_amount. */
export function grantAmount(program: ProgramTerms, deposit: Dec | null): Dec {
  let amount =
    program.kind === 'fixed' ? dec(program.amount!) : deposit === null ? new D(0) : deposit.times(program.percent!).div(100);
  if (program.maxAmount !== null && program.maxAmount !== undefined) amount = D.min(amount, program.maxAmount);
  return amount.toDecimalPlaces(2, D.ROUND_DOWN);
}

/** Why a programme cannot grant on this account now, or null. */
export function ineligible(program: ProgramTerms, account: BonusAccountRow): string | null {
  if (!program.enabled) return 'The programme is disabled';
  const now = Date.now();
  if (program.startsAt && new Date(program.startsAt).getTime() > now) return 'The programme has not started';
  if (program.endsAt && new Date(program.endsAt).getTime() <= now) return 'The programme has ended';
  if (account.kind === 'wallet' || account.kind === 'demo') return 'A bonus is granted on a live or prop trading account';
  if (account.currency !== program.currency)
    return `The programme grants ${program.currency}, the account is in ${account.currency}`;
  if (program.groupIds.length > 0 && (!account.group_id || !program.groupIds.includes(account.group_id)))
    return "The account's group is not eligible for the programme";
  return null;
}

/** Lots required and expiry of a bonus of `amount` granted now. */
export function termsOfGrant(program: ProgramTerms, amount: Dec): { lots: Dec; expires: Date | null } {
  return {
    lots: amount.times(program.lotsPerUnit).toDecimalPlaces(2, D.ROUND_UP),
    expires: program.lifetimeDays ? new Date(Date.now() + program.lifetimeDays * 86_400_000) : null,
  };
}

/**
 * The `bonus_grant` fraud rules, before any bonus credit is booked: `allow`, `review` (the
 * bonus is kept `on_hold`, no credit, until a case releases it) or `block` (nothing is granted).
 */
export async function screenGrant(
  run: RunBound,
  customerId: string,
  amount: Dec,
  currency: string,
  bonusId: string,
): Promise<FraudDecision> {
  const request = currentSignals();
  const verdict = await evaluateFraudOn(
    run,
    'bonus_grant',
    { customerId, amount: amount.toFixed(2), currency, ip: request.ip, deviceId: request.deviceId },
    { type: 'bonus', id: bonusId },
  );
  return verdict.decision;
}

/** Books a bonus's credit (`credit_in`) now that it is `active`, with `bonus.granted`. */
export async function bookGrant(run: RunBound, bonusId: string, accountId: string, amount: Dec, name: string): Promise<BonusRow> {
  await moveCredit(run, accountId, 'in', amount, 'bonus', bonusId, `Bonus ${name}`);
  const bonus = await reload(run, bonusId);
  await emit(run, 'bonus.granted', bonus);
  return bonus;
}

/**
 * Grants a bonus on a locked account, once the `bonus_grant` fraud rules have run: the bonus
 * row `active` with its credit_in and `bonus.granted`, or `on_hold` with no credit on a review.
 * A block throws 403 FRAUD_BLOCKED (`onBlock: 'throw'`, a request) or grants nothing and
 * answers null (`'skip'`: a deposit's bonus, which must not undo the deposit).
 * Lots required = amount x lots_per_unit.
 */
export async function grantOnAccount(
  run: RunBound,
  program: ProgramTerms,
  account: BonusAccountRow,
  amount: Dec,
  source: { type: 'deposit' | 'promo' | 'manual'; id: string | null },
  onBlock: 'throw' | 'skip' = 'throw',
): Promise<BonusRow | null> {
  const id = randomUUID();
  const decision = await screenGrant(run, account.customer_id, amount, program.currency, id);
  if (decision === 'block') {
    if (onBlock === 'throw') throw fraudBlocked();
    return null;
  }
  const { lots, expires } = termsOfGrant(program, amount);
  const held = decision === 'review';
  await run(
    INSERT_BONUS.bind({
      id,
      program_id: program.id,
      customer_id: account.customer_id,
      account_id: account.id,
      login: account.login,
      amount: amount.toFixed(2),
      lots_required: lots.toFixed(2),
      expires_at: held ? null : expires,
      source_type: source.type,
      source_id: source.id,
      status: held ? 'on_hold' : 'active',
      hold_to: held ? 'active' : null,
    }),
  );
  if (held) return reload(run, id);
  return bookGrant(run, id, account.id, amount, program.name);
}

/** POST /api/crm/customers/{id}/bonuses: a bonus by hand on one of the customer's accounts. */
export async function grantByHand(
  em: EntityManager,
  actor: StaffCaller,
  customerId: string,
  input: { program_id: string; login: number; amount?: number },
): Promise<BonusView> {
  return em.transactional(async (tx) => {
    const run: RunBound = (s) => executeBoundInTransaction(tx, s);
    const program = await tx.findOne(BonusProgram, input.program_id);
    if (!program) throw fieldError('body', ['program_id'], 'No such bonus programme');
    const account = await one<BonusAccountRow>(
      run,
      LOCK_CUSTOMER_ACCOUNT.bind({ customer_id: customerId, login: String(input.login) }),
    );
    if (!account) throw errors.notFound('Account');
    const why = ineligible(program, account);
    if (why) throw fieldError('body', ['login'], why);
    const amount = input.amount !== undefined ? money(input.amount) : grantAmount(program, null);
    if (amount.lte(0)) throw fieldError('body', ['amount'], 'A deposit percentage programme granted by hand needs its amount');
    const bonus = (await grantOnAccount(run, program, account, amount, { type: 'manual', id: null }))!;
    const view = bonusView(bonus);
    recordAudit(tx, actor, { action: 'bonus.granted', entityType: 'bonus', entityId: bonus.id, after: view });
    return view;
  });
}

/**
 * Deposit bonuses: a completed deposit on a trading account grants each enabled `deposit`
 * programme the account is eligible for (currency, group, dates, min_deposit, and, with
 * first_deposit_only, the customer's first deposit). Runs after the deposit is booked.
 */
export async function grantOnDeposit(run: RunBound, accountId: string, deposit: Dec, depositId: string): Promise<void> {
  const account = (await one<BonusAccountRow>(run, LOCK_ACCOUNT.bind({ account_id: accountId })))!;
  if (account.kind === 'wallet' || account.kind === 'demo') return;
  const programs = await run<ProgramTerms>(DEPOSIT_PROGRAMS.bind({ currency: account.currency }));
  let depositCount: number | null = null;
  for (const program of programs) {
    if (ineligible(program, account)) continue;
    if (program.minDeposit && deposit.lt(program.minDeposit)) continue;
    if (program.firstDepositOnly) {
      depositCount ??= (await one<{ n: number }>(run, DEPOSIT_COUNT.bind({ customer_id: account.customer_id })))!.n;
      if (depositCount > 1) continue;
    }
    const amount = grantAmount(program, deposit);
    if (amount.gt(0)) await grantOnAccount(run, program, account, amount, { type: 'deposit', id: depositId }, 'skip');
  }
}

// --- ends ------------------------------------------------------------------------------

type EndStatus = 'expired' | 'forfeited' | 'cancelled';
const END_EVENTS = { expired: 'bonus.expired', forfeited: 'bonus.forfeited', cancelled: 'bonus.cancelled' } as const;

/**
 * Ends a bonus: the unreleased credit of an active one leaves (`credit_out`), the status is
 * terminal, its event is written. A pending or held bonus booked no credit: nothing leaves, and
 * its promo redemption (armed or on hold) is void.
 */
export async function endBonus(run: RunBound, b: BonusRow, status: EndStatus, reason: string): Promise<BonusRow> {
  const booked = b.status === 'active' && b.account_id !== null;
  const freed = booked ? unreleased(b, await creditOf(run, b.account_id!)) : new D(0);
  if (!booked) await run(VOID_REDEMPTION_OF_BONUS.bind({ bonus_id: b.id }));
  const creditReason = reason === 'stop_out' ? 'stop_out' : status === 'forfeited' ? 'forfeit' : 'bonus_end';
  if (booked) await moveCredit(run, b.account_id!, 'out', freed, creditReason, b.id, `Bonus ${status}: ${reason}`);
  await run(
    UPDATE_BONUS.bind({ id: b.id, amount: b.amount, released: b.released, lots_done: b.lots_done, status, end_reason: reason }),
  );
  const ended = await reload(run, b.id);
  await emit(run, END_EVENTS[status], ended, { credit_removed: freed.toFixed(2) });
  return ended;
}

/** POST /api/crm/bonuses/{id}/cancel. */
export async function cancelBonus(em: EntityManager, actor: StaffCaller, id: string, reason: string): Promise<BonusView> {
  return em.transactional(async (tx) => {
    const run: RunBound = (s) => executeBoundInTransaction(tx, s);
    const found = await one<BonusRow>(run, BONUS_BY_ID.bind({ id }));
    if (!found) throw errors.notFound('Bonus');
    // The account first, then the bonus: the order every bonus path locks in.
    // A pending bonus with no account yet: every account its deposit could land on.
    if (found.account_id) await run(LOCK_ACCOUNT.bind({ account_id: found.account_id }));
    else await run(LOCK_REDEEM_ACCOUNTS.bind({ customer_id: found.customer_id, login: null }));
    const b = (await one<BonusRow>(run, LOCK_BONUS.bind({ id })))!;
    if (b.status !== 'active' && b.status !== 'pending' && b.status !== 'on_hold')
      throw errors.conflict(
        'BONUS_NOT_ACTIVE',
        `The bonus is ${b.status}: only an active, pending or held bonus can be cancelled`,
      );
    const ended = await endBonus(run, b, 'cancelled', reason);
    const view = bonusView(ended);
    recordAudit(tx, actor, { action: 'bonus.cancelled', entityType: 'bonus', entityId: id, before: bonusView(b), after: view });
    return view;
  });
}

/**
 * The EOD step for a chunk of (locked) accounts: their active bonuses past expires_at expire.
 * One statement finds them for the whole chunk; each one found then ends as any bonus does.
 */
export async function expireBonuses(run: RunBound, accountIds: readonly string[], at: Date): Promise<number> {
  if (accountIds.length === 0) return 0;
  const due = await run<BonusRow>(EXPIRED_BONUSES.bind({ account_ids: JSON.stringify(accountIds), at }));
  for (const b of due) await endBonus(run, b, 'expired', 'expired');
  return due.length;
}

/**
 * A stop-out that left the (locked) account with nothing open and a balance at or below zero:
 * its active bonuses are forfeited, their credit leaving with reason `stop_out`; any credit
 * left after them (a manual credit) is removed by the caller.
 */
export async function forfeitAfterStopOut(run: RunBound, accountId: string): Promise<void> {
  for (const b of await run<BonusRow>(ACTIVE_BONUSES.bind({ account_id: accountId })))
    await endBonus(run, b, 'forfeited', 'stop_out');
}

/** A deposit taken back (charge-back or refund): the bonuses it granted on the account are forfeited. */
export async function forfeitForReversedDeposit(run: RunBound, accountId: string, depositId: string): Promise<void> {
  for (const b of await run<BonusRow>(BONUSES_OF_DEPOSIT.bind({ account_id: accountId, deposit_id: depositId })))
    await endBonus(run, b, 'forfeited', 'deposit_reversed');
}

// --- money leaving ---------------------------------------------------------------------

export async function bonusesOfCustomer(run: RunBound, customerId: string): Promise<BonusView[]> {
  const rows = await run<BonusRow>(CUSTOMER_BONUSES.bind({ customer_id: customerId }));
  return rows.map(bonusView);
}
