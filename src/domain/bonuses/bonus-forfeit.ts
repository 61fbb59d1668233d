import type { RunBound } from '../../db/bound-transaction';
import { D, dec, money, type Dec } from '../../platform/decimal';
import { AppError } from '../../platform/errors';
import { ACTIVE_BONUSES, UPDATE_BONUS, type BonusRow } from './bonus-statements';
import { emit, endBonus, moveCredit, reload, unreleased } from './bonuses';

export interface ForfeitQuote {
  bonus_id: string;
  amount: string;
}

/**
 * What moving `amount` out of the account costs its active bonuses: `forfeit` programmes lose
 * their whole unreleased credit; `proportional` ones the fraction of it that the amount is of
 * the balance.
 */
function forfeitQuote(bonuses: BonusRow[], credit: Dec, balance: Dec, amount: Dec): Array<{ bonus: BonusRow; amount: Dec }> {
  let left = credit;
  return bonuses.map((b) => {
    const open = unreleased(b, left);
    const share = b.on_transfer_out === 'forfeit' || balance.lte(0) ? open : money(open.times(D.min(amount.div(balance), 1)));
    left = left.minus(share);
    return { bonus: b, amount: share };
  });
}

/**
 * Before money leaves an account holding an active bonus (a transfer out, a payout, a
 * withdrawal): without `accept_bonus_forfeit: true` the request is refused with the quote
 * (409 BONUS_FORFEIT_UNCONFIRMED); with it, the quoted credit leaves in the same transaction.
 */
export async function forfeitOnMoneyOut(
  run: RunBound,
  account: { id: string; balance: string; credit: string },
  amount: Dec,
  accepted: boolean,
): Promise<void> {
  if (dec(account.credit).lte(0)) return;
  const bonuses = await run<BonusRow>(ACTIVE_BONUSES.bind({ account_id: account.id }));
  if (bonuses.length === 0) return;
  const quote = forfeitQuote(bonuses, dec(account.credit), dec(account.balance), amount).filter((q) => q.amount.gt(0));
  if (quote.length === 0) return;
  if (!accepted) {
    const total = quote.reduce((s, q) => s.plus(q.amount), new D(0));
    throw new AppError(
      409,
      'BONUS_FORFEIT_UNCONFIRMED',
      `Moving this money out forfeits ${total.toFixed(2)} of bonus credit; repeat the request with "accept_bonus_forfeit": true to proceed`,
      {},
      {
        forfeit: { bonus_id: quote[0]!.bonus.id, amount: total.toFixed(2) },
        forfeits: quote.map((q) => ({ bonus_id: q.bonus.id, amount: q.amount.toFixed(2) })),
      },
    );
  }
  for (const q of quote) {
    const open = dec(q.bonus.amount).minus(q.bonus.released);
    if (q.amount.gte(open)) {
      await endBonus(run, q.bonus, 'forfeited', 'money_out');
      continue;
    }
    // A proportional forfeit shrinks the bonus: what is left of it stays active.
    await moveCredit(run, q.bonus.account_id!, 'out', q.amount, 'forfeit', q.bonus.id, 'Bonus forfeited in part by money out');
    const amountLeft = dec(q.bonus.amount).minus(q.amount);
    await run(
      UPDATE_BONUS.bind({
        id: q.bonus.id,
        amount: amountLeft.toFixed(2),
        released: q.bonus.released,
        lots_done: q.bonus.lots_done,
        status: 'active',
        end_reason: null,
      }),
    );
    await emit(run, 'bonus.forfeited', await reload(run, q.bonus.id), { credit_removed: q.amount.toFixed(2), partial: true });
  }
}

// --- reads -----------------------------------------------------------------------------
