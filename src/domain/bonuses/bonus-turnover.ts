import type { RunBound } from '../../db/bound-transaction';
import { RELEASE_FROM_CREDIT, RELEASE_TO_BALANCE } from './bonus-statements';

/** A release the close's turnover part decided: the bonus and the amount leaving its credit for the balance. */
export interface TurnoverRelease {
  id: string;
  release: string;
}

/**
 * The turnover rules, applied to one close (see docs/bonuses.md): an order held less than the
 * programme's min_hold_seconds counts 0; the part of its volume matched by opposite positions
 * in the symbol open at the same time counts 0 (only net volume counts); profit or loss does
 * not matter. An order counts once per bonus (a unique row per bonus and ticket).
 *
 * Counting, the release decision, the bonus's progress and its events are part of the close's
 * own statement (TURNOVER_AT_CLOSE); only a close that releases credit books more after it:
 * each release's `bonus_release` pair, in the close's transaction.
 */
export async function bookReleases(run: RunBound, accountId: string, releases: readonly TurnoverRelease[]): Promise<void> {
  for (const r of releases) {
    const comment = 'Bonus released to the balance';
    await run(
      RELEASE_FROM_CREDIT.bind({
        account_id: accountId,
        delta: `-${r.release}`,
        direction: 'out',
        reason: 'bonus_release',
        reference_type: 'bonus',
        reference_id: r.id,
        comment,
      }),
    );
    await run(RELEASE_TO_BALANCE.bind({ account_id: accountId, amount: r.release, reference_id: r.id, comment }));
  }
}
