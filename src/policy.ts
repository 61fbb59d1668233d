import type { EventConsumer } from './domain/events/consumers';
import type { AccountRolloverStep } from './domain/eod/account-chunk';
import type { PostingHook } from './domain/ledger/posting';
import { BonusForfeitHook, BonusTurnoverHook, DepositBonusHook, DepositReversalBonusHook } from './domain/bonuses/bonus-hooks';
import { expireBonuses } from './domain/bonuses/bonuses';
import { executeBoundInTransaction } from './db/bound-statement';
import { CustomerAccessHook, FraudPostingHook, ReversalCaseHook } from './domain/fraud/hooks';
import type { CaseActionHandler, HoldHandler } from './domain/fraud/cases';
import { forfeitCustomerBonuses, resolveHeldBonuses } from './domain/bonuses/bonus-holds';
import { NegativeWalletHook } from './domain/money/negative-wallet';
import { NotificationsConsumer } from './domain/notifications/notifications';
import { PropChallengesConsumer } from './domain/prop/challenge-consumer';
import { takeDayStartEquities } from './domain/prop/challenge-decisions';
import { TaskRulesConsumer } from './domain/tasks/task-rules';
import { WebhookConsumer } from './domain/webhooks/consumer';
import { LifecycleConsumer, markDormantAtRollover } from './domain/crm/lifecycle';
import type { ReferralResolver } from './domain/identity/referrals';
import type { EodFinishStep } from './domain/eod/eod-runs';
import { IbAccrualHook } from './domain/partners/accrual';
import { clawBackForCase, IbChargebackHook, settleHoldsOfCase } from './domain/partners/partner-hooks';
import { resolvePartner } from './domain/partners/partners';
import { payDailyRewards } from './domain/partners/payouts';

/**
 * The policy the service hangs on its domain, composed in one place above it: the domain
 * areas that define a hook, a step or a consumer import its contract from a lower area, and
 * the contract must not import them back. A feature that reacts to money or events is added
 * here, and nowhere else.
 */

/**
 * Run inside the transaction of every posting of their flows (src/domain/ledger/posting.ts),
 * in this order: `before` may refuse the movement, `after` may book more with it.
 */
export const POSTING_HOOKS: readonly PostingHook[] = [
  // Moderation and the debt of a negative wallet refuse first: both are cheap reads of one row.
  CustomerAccessHook,
  NegativeWalletHook,
  FraudPostingHook,
  ReversalCaseHook,
  BonusForfeitHook,
  BonusTurnoverHook,
  // Partner rewards of a close: nothing for a client without a partner (the close statement says so).
  IbAccrualHook,
  DepositBonusHook,
  DepositReversalBonusHook,
  // A charge-back takes back the rewards the customer's orders earned since the deposit.
  IbChargebackHook,
];

/**
 * Run for each chunk of accounts at the end of day, after their swaps and snapshots, in the
 * same transaction, each step once for the whole chunk (see AccountRolloverStep): a prop
 * challenge's day-start equity is taken at the rollover, an active customer whose trading
 * went quiet becomes dormant, and bonuses past their expiry end.
 */
export const ACCOUNT_ROLLOVER_STEPS: readonly AccountRolloverStep[] = [
  (em, accounts, rollover) =>
    takeDayStartEquities(
      em,
      accounts.map(({ account, figures }) => ({ accountId: account.id, figures })),
      rollover.tradingDate,
    ).then(() => undefined),
  markDormantAtRollover,
  // Bonuses past their expiry at the rollover lose their unreleased credit.
  (em, accounts, rollover) =>
    expireBonuses(
      (s) => executeBoundInTransaction(em, s),
      accounts.map(({ account }) => account.id),
      rollover.cutoffAt,
    ).then(() => undefined),
];

/**
 * Run once per end-of-day run, after its accounts are done: partners on daily plans are paid
 * what they are owed, once per partner and date.
 */
export const EOD_FINISH_STEPS: readonly EodFinishStep[] = [
  (em, rollover) => payDailyRewards(em, rollover, rollover.batchSize).then(() => undefined),
];

/**
 * The partner a referral names, which sign-up, leads and promo codes look up at run time
 * rather than import the partner programmes (installed once at start-up).
 */
export const REFERRAL_RESOLVER: ReferralResolver = resolvePartner;

/**
 * Handed the domain events after they commit, by the outbox relay: customer notifications,
 * webhook dispatch, the prop challenge rules after closes, the customer lifecycle and the task rules. A consumer added later is handed
 * the events published after it starts, never the ones published before.
 */
export const EVENT_CONSUMERS: readonly EventConsumer[] = [
  NotificationsConsumer,
  WebhookConsumer,
  PropChallengesConsumer,
  LifecycleConsumer,
  TaskRulesConsumer,
];

/**
 * What a fraud case's resolution does beyond its built-in actions (src/domain/fraud/cases.ts),
 * in the resolution's transaction with the customer's accounts locked: `forfeit_bonuses` ends
 * the customer's bonuses and `clawback_ib` takes back the partner rewards its orders earned;
 * the holds (held bonuses and their promo redemptions, held partner rewards) are released by
 * `release_holds` or voided by a `fraud` verdict without it.
 */
export const FRAUD_CASE_ACTIONS: Readonly<Partial<Record<'forfeit_bonuses' | 'clawback_ib', CaseActionHandler>>> = {
  forfeit_bonuses: (tx, fraudCase) =>
    forfeitCustomerBonuses((s) => executeBoundInTransaction(tx, s), fraudCase.customerId).then(() => undefined),
  clawback_ib: clawBackForCase,
};

export const FRAUD_HOLD_HANDLERS: Readonly<Record<string, HoldHandler>> = {
  bonuses: (tx, fraudCase, outcome) => resolveHeldBonuses((s) => executeBoundInTransaction(tx, s), fraudCase.customerId, outcome),
  ib_accruals: settleHoldsOfCase,
};
