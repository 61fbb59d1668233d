import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { executeNamed } from '../../db/bound-statement';
import { dec, money } from '../../platform/decimal';
import type { QuoteStore } from '../prices/quote-store';
import { equitiesOf, type ChallengeRow } from './challenge-equity';
import { failChallenge, passChallengeIfDue } from './challenge-decisions';
import { lossBreach } from './challenge-rules';
import {
  ACTIVE_CHALLENGES_OF_ACCOUNTS,
  ACTIVE_CHALLENGES_OF_LOGINS,
  CLOSE_OUT_DUE,
  PASS_CANDIDATES,
  RAISE_HIGH_WATER_MARKS,
  TIME_LIMIT_DUE,
} from './prop.queries';

/** What an evaluation decided: the challenges it failed (their orders wait for a close-out) and the stages it passed. */
export interface ChallengeOutcome {
  evaluated: number;
  failed: string[];
  passed: string[];
  /** Passes that could not start the next stage (its group closed meanwhile, ...): the phase stays active, the sweep tries again. */
  passErrors: Array<{ challenge_id: string; error: string }>;
}

const none = (): ChallengeOutcome => ({ evaluated: 0, failed: [], passed: [], passErrors: [] });

/**
 * The loss rules (and, with `pass`, the pass rule) over `rows` at the latest quotes. Equity is
 * priced set by set; high-water marks move in one statement; only a breach or a pass takes a
 * transaction of its own (rare). A breach is decided by the conditional move out of `active`,
 * so any number of evaluators of the same tick fail a challenge once.
 */
export async function evaluateRows(
  em: EntityManager,
  quotes: QuoteStore,
  rows: ChallengeRow[],
  { pass }: { pass: boolean },
): Promise<ChallengeOutcome> {
  const out = none();
  if (rows.length === 0) return out;
  out.evaluated = rows.length;
  const equities = await equitiesOf(em, quotes, rows);
  const now = new Date();
  const raised: Array<{ id: string; equity: string }> = [];
  for (const row of rows) {
    const balance = dec(row.balance);
    const equity = equities.get(row.account_id) ?? balance;
    const breach = lossBreach(row, equity, balance, now);
    if (breach) {
      if (await failChallenge(em, row.challenge_id, row.account_id, breach)) out.failed.push(row.challenge_id);
      continue;
    }
    if (equity.gt(row.high_water_mark)) raised.push({ id: row.challenge_id, equity: money(equity).toFixed(2) });
    if (pass && row.open.length === 0) {
      // Its own savepoint when inside a caller's transaction: one stage that cannot start its
      // next stage must not hold back the rest of the batch (nor block an inbox for good).
      try {
        const next = await passChallengeIfDue(em, quotes, row);
        if (next) out.passed.push(row.challenge_id);
      } catch (err) {
        out.passErrors.push({ challenge_id: row.challenge_id, error: err instanceof Error ? err.message : String(err) });
      }
    }
  }
  if (raised.length) await executeNamed(em, RAISE_HIGH_WATER_MARKS.bind({ rows: JSON.stringify(raised) }));
  return out;
}

/**
 * The per-tick hook: the loss rules for the active challenges of `accountIds` (the accounts
 * holding the ticked symbol with an active challenge, as the engine's lookup found them) at
 * the latest quotes. The engine calls it only when there is one: a tick of a symbol no
 * challenge holds costs it nothing.
 */
export async function evaluateChallengesOnTick(
  em: EntityManager,
  quotes: QuoteStore,
  accountIds: string[],
): Promise<ChallengeOutcome> {
  if (accountIds.length === 0) return none();
  const rows = await executeNamed<ChallengeRow>(
    em,
    ACTIVE_CHALLENGES_OF_ACCOUNTS.bind({ account_ids: JSON.stringify(accountIds) }),
  );
  return evaluateRows(em, quotes, rows, { pass: false });
}

/** After closes: every rule, the pass included, for the active challenges on these logins. */
export async function evaluateChallengesOfLogins(
  em: EntityManager,
  quotes: QuoteStore,
  logins: number[],
): Promise<ChallengeOutcome> {
  if (logins.length === 0) return none();
  const rows = await executeNamed<ChallengeRow>(em, ACTIVE_CHALLENGES_OF_LOGINS.bind({ logins: JSON.stringify(logins) }));
  return evaluateRows(em, quotes, rows, { pass: true });
}

/** What one run of the prop sweep did. */
export interface SweepOutcome {
  timeLimited: string[];
  closeOutsDue: string[];
  passed: string[];
}

/** How many rows each step of the sweep takes at once. */
const SWEEP_PAGE = 1000;

/**
 * The prop sweep, run every few seconds by the workers:
 * - phases past `max_trading_days` fail with rule `time_limit`;
 * - failed challenges whose close-out has not finished (a worker that died between the failure
 *   and queueing the close-out) are handed back for one;
 * - phases that reached their target with nothing open pass, should an evaluation after the
 *   last close have been lost.
 */
export async function sweepChallenges(
  em: EntityManager,
  quotes: QuoteStore,
  { now = new Date(), logger }: { now?: Date; logger?: Logger } = {},
): Promise<SweepOutcome> {
  const out: SweepOutcome = { timeLimited: [], closeOutsDue: [], passed: [] };
  const outcomeErrors: ChallengeOutcome['passErrors'] = [];
  const expired = await executeNamed<{ account_id: string }>(em, TIME_LIMIT_DUE.bind({ limit: SWEEP_PAGE }));
  if (expired.length) {
    const rows = await executeNamed<ChallengeRow>(
      em,
      ACTIVE_CHALLENGES_OF_ACCOUNTS.bind({ account_ids: JSON.stringify(expired.map((e) => e.account_id)) }),
    );
    const equities = await equitiesOf(em, quotes, rows);
    for (const row of rows) {
      const balance = dec(row.balance);
      const failure = {
        rule: 'time_limit' as const,
        threshold: new Date(row.ends_at!).toISOString(),
        equity: money(equities.get(row.account_id) ?? balance).toFixed(2),
        balance: balance.toFixed(2),
        at: now.toISOString(),
      };
      if (await failChallenge(em, row.challenge_id, row.account_id, failure)) out.timeLimited.push(row.challenge_id);
    }
  }

  const lagging = await executeNamed<{ id: string }>(em, CLOSE_OUT_DUE.bind({ grace_seconds: 10, limit: SWEEP_PAGE }));
  out.closeOutsDue = lagging.map((r) => r.id);

  const candidates = await executeNamed<{ account_id: string }>(em, PASS_CANDIDATES.bind({ limit: SWEEP_PAGE }));
  if (candidates.length) {
    const rows = await executeNamed<ChallengeRow>(
      em,
      ACTIVE_CHALLENGES_OF_ACCOUNTS.bind({ account_ids: JSON.stringify(candidates.map((c) => c.account_id)) }),
    );
    const outcome = await evaluateRows(em, quotes, rows, { pass: true });
    out.passed = outcome.passed;
    out.closeOutsDue.push(...outcome.failed);
    outcomeErrors.push(...outcome.passErrors);
  }
  if (logger && outcomeErrors.length) logger.warn({ pass_errors: outcomeErrors }, 'prop sweep could not pass some challenges');
  if (logger && (out.timeLimited.length || out.passed.length || out.closeOutsDue.length))
    logger.info({ ...out }, 'prop sweep decided challenges');
  return out;
}
