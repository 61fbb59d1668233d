import { dec } from '../../platform/decimal';
import type { PostingHook } from '../ledger/posting';
import { forfeitForReversedDeposit, grantOnDeposit } from './bonuses';
import { bookReleases, type TurnoverRelease } from './bonus-turnover';
import { TURNOVER_AFTER_CLOSE, TURNOVER_AT_CLOSE, TURNOVER_RELEASES_NOTHING } from './turnover-statements';
import { forfeitOnMoneyOut } from './bonus-forfeit';
import { grantArmedOnDeposit } from './promo-redeem';
import { LOCK_ACCOUNT, type BonusAccountRow } from './bonus-statements';

/**
 * The bonus policy on the money paths (installed in src/policy.ts). Each hook reads the locked
 * account first and returns at once when it has nothing to do: an account without credit has
 * no active bonus, so closes and transfers of accounts without bonuses pay no round trip.
 */

/**
 * Turnover: a close counts toward the account's active bonuses, in the close's own statement
 * (TURNOVER_AT_CLOSE, left out for an account that had no credit when the close read it); a
 * close that releases credit books the `bonus_release` pairs after it, in the same transaction.
 * A close that releases nothing is counted by the close's one guarded statement, with no
 * transaction: only a release, a second posting on the account row, needs one.
 */
export const BonusTurnoverHook: PostingHook = {
  name: 'bonus_turnover',
  flows: ['order_close'],
  statementPart: TURNOVER_AT_CLOSE,
  // Without the part, no credit says no active bonus: nothing to count. With it, the part counts
  // and `after` has nothing to do unless the close releases credit.
  idleWhen: { sql: 'a.credit <= 0', withPart: TURNOVER_RELEASES_NOTHING },
  async after(run, posting) {
    let releases = posting.answers?.['bonus_turnover'] as readonly TurnoverRelease[] | undefined;
    if (releases === undefined) {
      // Left out of the close, but the locked account has credit: credit granted meanwhile.
      if (dec(posting.account.credit ?? '0').lte(0)) return;
      const [counted] = await run<{ releases: TurnoverRelease[] }>(
        TURNOVER_AFTER_CLOSE.bind({ account_id: posting.account.id, ticket: posting.reference.id }),
      );
      releases = counted?.releases ?? [];
    }
    if (releases.length > 0) await bookReleases(run, posting.account.id, releases);
  },
};

/**
 * Money out of an account holding an active bonus: 409 with the forfeiture quote unless the
 * request declared `accept_bonus_forfeit: true`, in which case the credit leaves with it.
 */
export const BonusForfeitHook: PostingHook = {
  name: 'bonus_forfeit',
  flows: ['transfer_out', 'payout', 'withdrawal'],
  async before(run, posting) {
    if (dec(posting.account.credit ?? '0').lte(0)) return;
    await forfeitOnMoneyOut(run, posting.account, dec(posting.amount).abs(), posting.request?.accept_bonus_forfeit === true);
  },
};

/**
 * Deposit bonuses: a completed deposit grants the deposit programmes the account qualifies for,
 * and the pending bonuses of the customer's armed promo codes it qualifies for. Each grant runs
 * the `bonus_grant` fraud rules: a `review` keeps the bonus on hold, a `block` grants nothing
 * and leaves the deposit booked.
 */
export const DepositBonusHook: PostingHook = {
  name: 'deposit_bonus',
  flows: ['deposit'],
  async after(run, posting) {
    if (posting.account.kind === 'wallet' || posting.account.kind === 'demo') return;
    await grantOnDeposit(run, posting.account.id, dec(posting.amount), posting.reference.id);
    // Promo codes armed until a qualifying deposit are granted on it.
    const [account] = await run<BonusAccountRow>(LOCK_ACCOUNT.bind({ account_id: posting.account.id }));
    await grantArmedOnDeposit(run, account!, dec(posting.amount));
  },
};

/** A provider's charge-back or refund of a deposit forfeits the bonuses that deposit granted. */
export const DepositReversalBonusHook: PostingHook = {
  name: 'deposit_reversal_bonus',
  flows: ['deposit_reversal'],
  async after(run, posting) {
    if (dec(posting.account.credit ?? '0').lte(0)) return;
    await forfeitForReversedDeposit(run, posting.account.id, posting.reference.id);
  },
};
