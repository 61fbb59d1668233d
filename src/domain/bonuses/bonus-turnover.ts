import type { RunBound } from '../../db/bound-transaction';
import { D, dec, type Dec } from '../../platform/decimal';
import {
  ACTIVE_BONUSES,
  CLOSED_ORDER,
  COUNT_TURNOVER,
  RELEASE_FROM_CREDIT,
  RELEASE_TO_BALANCE,
  UPDATE_BONUS,
  type BonusRow,
} from './bonus-statements';
import { creditOf, emit, one, reload } from './bonuses';

/**
 * The turnover rules, applied to one close (see docs/bonuses.md): an order held less than the
 * programme's min_hold_seconds counts 0; the part of its volume matched by opposite positions
 * in the symbol open at the same time counts 0 (only net volume counts); profit or loss does
 * not matter. An order counts once per bonus (a unique row per bonus and ticket).
 */
export async function countClose(run: RunBound, accountId: string, ticket: string): Promise<void> {
  const bonuses = await run<BonusRow>(ACTIVE_BONUSES.bind({ account_id: accountId }));
  if (bonuses.length === 0) return;
  const order = await one<{ volume: string; held_seconds: number; hedged: string }>(run, CLOSED_ORDER.bind({ ticket }));
  if (!order) return;
  for (const b of bonuses) {
    const counts = order.held_seconds >= b.min_hold_seconds ? D.max(dec(order.volume).minus(order.hedged), 0) : new D(0);
    const inserted = await run(COUNT_TURNOVER.bind({ bonus_id: b.id, ticket, lots: counts.toFixed(2) }));
    if (inserted.length === 0 || counts.isZero()) continue;
    await advance(run, b, counts);
  }
}

async function advance(run: RunBound, b: BonusRow, counted: Dec): Promise<void> {
  const lotsDone = dec(b.lots_done).plus(counted);
  const required = dec(b.lots_required);
  const remaining = dec(b.amount).minus(b.released);
  const done = lotsDone.gte(required);
  let release: Dec;
  if (done) release = remaining;
  else if (b.release_mode === 'per_lot')
    release = D.min(counted.times(b.amount).div(required).toDecimalPlaces(2, D.ROUND_DOWN), remaining);
  else release = new D(0);
  const credit = await creditOf(run, b.account_id!);
  release = D.max(D.min(release, credit), 0);
  if (release.gt(0)) {
    await run(
      RELEASE_FROM_CREDIT.bind({
        account_id: b.account_id!,
        delta: release.neg().toFixed(2),
        direction: 'out',
        reason: 'bonus_release',
        reference_type: 'bonus',
        reference_id: b.id,
        comment: 'Bonus released to the balance',
      }),
    );
    await run(
      RELEASE_TO_BALANCE.bind({
        account_id: b.account_id!,
        amount: release.toFixed(2),
        reference_id: b.id,
        comment: 'Bonus released to the balance',
      }),
    );
  }
  const released = dec(b.released).plus(release);
  // Fully released, or the target reached with nothing left in credit to release: it is over.
  const status = done ? 'completed' : 'active';
  await run(
    UPDATE_BONUS.bind({
      id: b.id,
      amount: b.amount,
      released: released.toFixed(2),
      lots_done: lotsDone.toFixed(2),
      status,
      end_reason: null,
    }),
  );
  const after = await reload(run, b.id);
  await emit(run, 'bonus.progress', after, { lots_counted: counted.toFixed(2) });
  if (release.gt(0)) await emit(run, 'bonus.released', after, { released_now: release.toFixed(2) });
  if (done) await emit(run, 'bonus.completed', after);
}
