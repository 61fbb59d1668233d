import type { EntityManager } from '@mikro-orm/postgresql';
import { Customer } from '../../entities/customer.entity';
import { PropChallenge, type ChallengeFailure } from '../../entities/prop-challenge.entity';
import { PropProgram } from '../../entities/prop-program.entity';
import { executeNamed } from '../../db/bound-statement';
import { dec } from '../../platform/decimal';
import { lockAccounts } from '../accounts/accounts';
import { recordEvent } from '../events/outbox';
import { closeOrder } from '../orders/close-order';
import type { QuoteStore } from '../prices/quote-store';
import type { ChallengeRow } from './challenge-equity';
import { passes } from './challenge-rules';
import { challengeView, startStage, tradingDaysOf } from './challenges';
import {
  ACTIVE_CHALLENGES_OF_ACCOUNTS,
  DISABLE_TRADING,
  FAIL_CHALLENGE,
  MARK_CLOSED_OUT,
  OPEN_TICKETS,
  PASS_CHALLENGE,
  TAKE_DAY_STARTS,
} from './prop.queries';

/**
 * LOCK ORDER. A decision locks the stage's account row first, then moves the challenge row
 * with a conditional update: failing and passing take them in the same order, so they never
 * wait on each other crosswise, and an order opening on the account (which holds the account
 * row while it checks `trading_disabled`) either commits before the decision, and is closed
 * by the close-out, or sees trading disabled.
 */

/**
 * Fails an active challenge (active -> failed, once, whoever else decides it at the same time):
 * the failure snapshot, trading disabled on the account, and `prop.challenge_failed`, in one
 * transaction. Returns whether this call moved it; the caller then queues the close-out of its
 * orders (and if the caller dies first, the prop sweep does).
 */
export async function failChallenge(em: EntityManager, challengeId: string, accountId: string, failure: ChallengeFailure) {
  return em.transactional(async (tx) => {
    await lockAccounts(tx, [accountId]);
    const moved = await executeNamed(tx, FAIL_CHALLENGE.bind({ id: challengeId, failure: JSON.stringify(failure) }));
    if (moved.length === 0) return false;
    await executeNamed(tx, DISABLE_TRADING.bind({ account_id: accountId }));
    const challenge = await tx.findOneOrFail(PropChallenge, challengeId, { refresh: true });
    const days = await tradingDaysOf(tx, [accountId]);
    const view = challengeView(challenge, days.get(accountId) ?? 0);
    recordEvent(tx, {
      type: 'prop.challenge_failed',
      aggregateType: 'prop_challenge',
      aggregateId: challenge.id,
      customerId: challenge.customer.id,
      data: view,
    });
    return true;
  });
}

/**
 * Passes an active phase if it passes now, judged under the account's lock: nothing open, the
 * balance at the target, enough days with a trade. The phase becomes `passed` (conditionally,
 * so a breach deciding at the same time wins or loses whole), its account stops trading, and
 * the next stage starts on a new account: phase + 1 `active`, or after the last phase the
 * `funded` stage; `prop.challenge_passed` names both. Returns the next stage's id, or null.
 */
export async function passChallengeIfDue(em: EntityManager, quotes: QuoteStore, row: ChallengeRow): Promise<string | null> {
  return em.transactional(async (tx) => {
    const account = (await lockAccounts(tx, [row.account_id])).get(row.account_id);
    if (!account) return null;
    const [fresh] = await executeNamed<ChallengeRow>(
      tx,
      ACTIVE_CHALLENGES_OF_ACCOUNTS.bind({ account_ids: JSON.stringify([row.account_id]) }),
    );
    if (!fresh) return null;
    const days = (await tradingDaysOf(tx, [row.account_id])).get(row.account_id) ?? 0;
    if (!passes(fresh, dec(account.balance), fresh.open.length, days)) return null;
    const moved = await executeNamed(tx, PASS_CHALLENGE.bind({ id: fresh.challenge_id }));
    if (moved.length === 0) return null;
    await executeNamed(tx, DISABLE_TRADING.bind({ account_id: row.account_id }));
    const passed = await tx.findOneOrFail(PropChallenge, fresh.challenge_id, { refresh: true });
    const program = await tx.findOneOrFail(PropProgram, passed.program.id);
    const customer = await tx.findOneOrFail(Customer, passed.customer.id);
    const next = await startStage(tx, quotes, program, customer, passed.phase + 1, passed);
    recordEvent(tx, {
      type: 'prop.challenge_passed',
      aggregateType: 'prop_challenge',
      aggregateId: passed.id,
      customerId: customer.id,
      data: {
        ...challengeView(passed, days),
        next_challenge_id: next.id,
        next_login: Number(next.login),
        next_status: next.status,
      },
    });
    return next.id;
  });
}

/** Outcome of a close-out: `done` once nothing is left open on the failed stage's account. */
export type CloseOutOutcome = 'done' | 'not_failed' | 'already_done';

/** Thrown when an order of a failed stage could not be closed now (no price): the job retries. */
export class CloseOutIncomplete extends Error {}

/**
 * Closes every open order of a failed stage (reason `prop_breach`), then records the close-out.
 * Idempotent and safe to run twice at once: each close matches only an open order, so a
 * ticket is booked once; an order opened just before trading was disabled is found by the
 * next round. Throws CloseOutIncomplete while an order cannot be closed (no quote), so the
 * job is retried.
 */
export async function closeOutChallenge(em: EntityManager, quotes: QuoteStore, challengeId: string): Promise<CloseOutOutcome> {
  const challenge = await em.findOne(PropChallenge, challengeId, { refresh: true });
  if (!challenge || challenge.status !== 'failed') return 'not_failed';
  if (challenge.closedOutAt) return 'already_done';
  const accountId = challenge.account.id;
  for (let round = 0; round < 100; round++) {
    const open = await executeNamed<{ ticket: string }>(em, OPEN_TICKETS.bind({ account_id: accountId }));
    if (open.length === 0) {
      await executeNamed(em, MARK_CLOSED_OUT.bind({ id: challengeId }));
      return 'done';
    }
    const failed: string[] = [];
    for (const { ticket } of open) {
      const outcome = await closeOrder(em.fork() as EntityManager, quotes, ticket, 'prop_breach');
      if (outcome.kind === 'failed') failed.push(`${ticket}: ${outcome.reason}`);
    }
    if (failed.length) throw new CloseOutIncomplete(`orders not closed yet: ${failed.join('; ')}`);
  }
  throw new CloseOutIncomplete('orders keep opening on a failed challenge account');
}

/**
 * Takes the day start of the active challenges on some accounts at the rollover of trading date
 * `tradingDate`, in one statement: for each, the larger of its balance and equity as the end
 * of day's account job sees them, after that night's swaps. Once per challenge and date: a
 * date older than the last taken (a back-filled run) leaves it alone; the end of day runs an
 * account's steps once per date. Answers how many challenges moved.
 */
export async function takeDayStartEquities(
  em: EntityManager,
  accounts: readonly { accountId: string; figures: { balance: string; equity: string } }[],
  tradingDate: string,
): Promise<number> {
  if (accounts.length === 0) return 0;
  const rows = accounts.map(({ accountId, figures }) => {
    const balance = dec(figures.balance);
    const equity = dec(figures.equity);
    return { account_id: accountId, value: (equity.gt(balance) ? equity : balance).toFixed(2) };
  });
  const moved = await executeNamed(em, TAKE_DAY_STARTS.bind({ rows: JSON.stringify(rows), day: tradingDate }));
  return moved.length;
}
