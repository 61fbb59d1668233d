import { randomUUID } from 'node:crypto';
import type { RunBound } from '../../db/bound-transaction';
import { dec, type Dec } from '../../platform/decimal';
import type { HoldOutcome } from '../fraud/cases';
import {
  CUSTOMER_BONUSES_IN,
  INSERT_BONUS,
  SET_REDEMPTION_OF_BONUS,
  SETTLE_BONUS,
  type BonusAccountRow,
  type BonusRow,
  type ProgramTerms,
} from './bonus-statements';
import { bookGrant, endBonus, reload, screenGrant, termsOfGrant } from './bonuses';
import { PROGRAM_TERMS } from './promo-statements';

/**
 * Bonuses that exist before their credit: `pending` (a promo code armed until a qualifying
 * deposit) and `on_hold` (a fraud review holds it until its case resolves). Neither has booked
 * credit, so ending one moves no money; granting one books its credit then.
 */

/** Records a bonus that books no credit yet: `pending`, or `on_hold` with what its release makes it. */
export async function recordUngranted(
  run: RunBound,
  program: ProgramTerms,
  customerId: string,
  account: BonusAccountRow | null,
  amount: Dec,
  source: { type: 'promo'; id: string },
  hold: { status: 'pending' } | { status: 'on_hold'; holdTo: 'pending' | 'active' },
): Promise<BonusRow> {
  const id = randomUUID();
  const { lots } = termsOfGrant(program, amount);
  await run(
    INSERT_BONUS.bind({
      id,
      program_id: program.id,
      customer_id: customerId,
      account_id: account?.id ?? null,
      login: account?.login ?? null,
      amount: amount.toFixed(2),
      lots_required: lots.toFixed(2),
      expires_at: null,
      source_type: source.type,
      source_id: source.id,
      status: hold.status,
      hold_to: hold.status === 'on_hold' ? hold.holdTo : null,
    }),
  );
  return reload(run, id);
}

/**
 * A pending bonus at its qualifying deposit, on the (locked) account the deposit credited, for
 * `amount`: the `bonus_grant` rules run first. Allowed, it becomes `active` with its credit and
 * its redemption `applied`; reviewed, `on_hold` (and its redemption); blocked, it is cancelled
 * and its redemption void. The lifetime runs from now.
 */
export async function activatePending(
  run: RunBound,
  b: BonusRow,
  program: ProgramTerms,
  account: BonusAccountRow,
  amount: Dec,
): Promise<'applied' | 'on_hold' | 'blocked'> {
  const decision = await screenGrant(run, account.customer_id, amount, program.currency, b.id);
  if (decision === 'block') {
    await endBonus(run, b, 'cancelled', 'fraud_blocked');
    return 'blocked';
  }
  const { lots, expires } = termsOfGrant(program, amount);
  const held = decision === 'review';
  await run(
    SETTLE_BONUS.bind({
      id: b.id,
      account_id: account.id,
      login: account.login,
      amount: amount.toFixed(2),
      lots_required: lots.toFixed(2),
      expires_at: held ? null : expires,
      status: held ? 'on_hold' : 'active',
      hold_to: held ? 'active' : null,
    }),
  );
  await run(SET_REDEMPTION_OF_BONUS.bind({ bonus_id: b.id, status: held ? 'on_hold' : 'applied', cost: amount.toFixed(2) }));
  if (held) return 'on_hold';
  await bookGrant(run, b.id, account.id, amount, program.name);
  return 'applied';
}

/**
 * A resolved case's holds on the customer's bonuses (its accounts locked by the resolution):
 * `release` grants each held bonus now (credit, `bonus.granted`, its redemption `applied`) or,
 * if it was waiting for a deposit, makes it `pending` again (its redemption `armed`); `void`
 * cancels each (no credit was booked) and voids its redemption.
 */
export async function resolveHeldBonuses(run: RunBound, customerId: string, outcome: HoldOutcome): Promise<void> {
  for (const b of await run<BonusRow>(CUSTOMER_BONUSES_IN.bind({ customer_id: customerId, statuses: ['on_hold'] }))) {
    if (outcome === 'void') {
      await endBonus(run, b, 'cancelled', 'fraud_review');
      continue;
    }
    if (b.hold_to === 'pending' || b.account_id === null) {
      await run(
        SETTLE_BONUS.bind({
          id: b.id,
          account_id: b.account_id,
          login: b.login,
          amount: b.amount,
          lots_required: b.lots_required,
          expires_at: null,
          status: 'pending',
          hold_to: null,
        }),
      );
      await run(SET_REDEMPTION_OF_BONUS.bind({ bonus_id: b.id, status: 'armed', cost: null }));
      continue;
    }
    const [program] = await run<ProgramTerms>(PROGRAM_TERMS.bind({ id: b.program_id }));
    const amount = dec(b.amount);
    const { lots, expires } = termsOfGrant(program!, amount);
    await run(
      SETTLE_BONUS.bind({
        id: b.id,
        account_id: b.account_id,
        login: b.login,
        amount: b.amount,
        lots_required: lots.toFixed(2),
        expires_at: expires,
        status: 'active',
        hold_to: null,
      }),
    );
    await run(SET_REDEMPTION_OF_BONUS.bind({ bonus_id: b.id, status: 'applied', cost: null }));
    await bookGrant(run, b.id, b.account_id, amount, program!.name);
  }
}

/**
 * The `forfeit_bonuses` action of a resolved case: every active, held or pending bonus of the
 * customer is forfeited (`bonus.forfeited`); an active one's unreleased credit leaves with
 * `credit_out`, and the redemptions of the others are void.
 */
export async function forfeitCustomerBonuses(run: RunBound, customerId: string): Promise<number> {
  const live = await run<BonusRow>(
    CUSTOMER_BONUSES_IN.bind({ customer_id: customerId, statuses: ['active', 'on_hold', 'pending'] }),
  );
  for (const b of live) await endBonus(run, b, 'forfeited', 'fraud');
  return live.length;
}
