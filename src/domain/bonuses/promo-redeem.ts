import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { Customer } from '../../entities/customer.entity';
import type { RunBound } from '../../db/bound-transaction';
import { executeBoundInTransaction } from '../../db/bound-statement';
import { D, dec, type Dec } from '../../platform/decimal';
import { recordEvent } from '../events/outbox';
import { evaluateFraud } from '../fraud/evaluate';
import { endBonus, grantAmount, grantOnAccount, ineligible, one } from './bonuses';
import { activatePending, recordUngranted } from './bonus-holds';
import { LOCK_BONUS, type BonusAccountRow, type BonusRow, type ProgramTerms } from './bonus-statements';
import { decide, type RedemptionSchema } from './promo-codes';
import {
  APPLY_REDEMPTION,
  ARMED_OF_CUSTOMER,
  INSERT_REDEMPTION,
  LOCK_CAMPAIGN_BY_ID,
  LOCK_REDEEM_ACCOUNTS,
  PROGRAM_TERMS,
  USE_BUDGET,
  USE_CODE,
  type CampaignRow,
} from './promo-statements';

/**
 * Redeeming a promo code, and granting armed codes at the qualifying deposit.
 *
 * Lock order. Every path that touches a customer's bonus accounts, promo codes and campaigns
 * takes its row locks in one order: the customer's trading accounts (by id, as transfers do),
 * then the promo code, then the campaign, then the bonus and redemption rows, then the customer
 * (a fraud case). A deposit's armed grant holds its account from the posting before it locks a
 * campaign, so a redeem locks the accounts it may grant on before the code and the campaign:
 * taken the other way, a redeem (code, campaign, then account) and a deposit (account, then
 * campaign) of one customer at once could each wait for the other.
 */

/**
 * POST /customers/me/promo-codes/redeem. After every check (decide(), the code and campaign
 * locked) and before anything is written, the `promo_redeem` fraud rules run: a block is 403
 * FRAUD_BLOCKED and writes nothing; a review records the redemption `on_hold` and its bonus
 * `on_hold` (no credit) until the case resolves. Otherwise an armed code records its bonus
 * `pending` (credit at the qualifying deposit), and an applied one grants it now (the
 * `bonus_grant` rules may still hold it). The use of the code and its campaign's budget are
 * taken now in every case.
 */
export async function redeemPromoCode(em: EntityManager, customerId: string, input: { code: string; login?: number }) {
  return em.transactional(async (tx) => {
    const run: RunBound = (s) => executeBoundInTransaction(tx, s);
    await run(
      LOCK_REDEEM_ACCOUNTS.bind({ customer_id: customerId, login: input.login !== undefined ? String(input.login) : null }),
    );
    const d = await decide(run, tx, customerId, input, true);
    const id = randomUUID();
    const verdict = await evaluateFraud(
      tx,
      'promo_redeem',
      { customerId, amount: d.armed ? null : d.amount.toFixed(2), currency: d.program.currency },
      { type: 'promo_redemption', id },
    );
    const source = { type: 'promo' as const, id: d.code.id };
    // A pending bonus shows what it will grant when it is known now (a fixed amount).
    const pendingAmount = d.program.kind === 'fixed' ? grantAmount(d.program, null) : new D(0);
    // An armed code names its account only when the customer named one: otherwise the first
    // qualifying deposit on any eligible account takes it.
    const pendingAccount = input.login !== undefined ? d.account : null;
    let bonus: BonusRow;
    if (verdict.decision === 'review')
      bonus = await recordUngranted(
        run,
        d.program,
        customerId,
        d.armed ? pendingAccount : d.account,
        d.armed ? pendingAmount : d.amount,
        source,
        { status: 'on_hold', holdTo: d.armed ? 'pending' : 'active' },
      );
    else if (d.armed)
      bonus = await recordUngranted(run, d.program, customerId, pendingAccount, pendingAmount, source, { status: 'pending' });
    else bonus = (await grantOnAccount(run, d.program, d.account!, d.amount, source))!;
    const status = bonus.status === 'on_hold' ? 'on_hold' : bonus.status === 'pending' ? 'armed' : 'applied';
    await run(
      INSERT_REDEMPTION.bind({
        id,
        promo_code_id: d.code.id,
        code: d.code.code,
        customer_id: customerId,
        login: input.login !== undefined ? String(input.login) : null,
        status,
        bonus_id: bonus.id,
        cost: d.amount.toFixed(2),
      }),
    );
    await run(USE_CODE.bind({ id: d.code.id }));
    if (d.campaign?.budget_type)
      await run(USE_BUDGET.bind({ id: d.campaign.id, amount: d.campaign.budget_type === 'usage' ? '1' : d.amount.toFixed(2) }));
    // A code with a partner attributes the customer to it, unless the customer has one.
    if (d.code.partner_id) {
      const customer = await tx.findOneOrFail(Customer, customerId);
      customer.affiliateId ??= d.code.partner_id;
    }
    const view = { id, code: d.code.code, status, bonus_id: bonus.id } as z.output<typeof RedemptionSchema>;
    recordEvent(tx, {
      type: 'promo.redeemed',
      aggregateType: 'promo_code',
      aggregateId: d.code.id,
      customerId,
      data: {
        ...view,
        customer_id: customerId,
        login: d.account ? Number(d.account.login) : null,
        campaign_id: d.code.campaign_id,
      },
    });
    return view;
  });
}

interface ArmedRow {
  id: string;
  login: string | null;
  promo_code_id: string;
  bonus_id: string | null;
  bonus_program_id: string;
  min_deposit: string | null;
  campaign_id: string | null;
  expires_at: Date | null;
}

/**
 * Armed codes at a completed deposit on a (locked) trading account: each armed redemption of
 * the customer whose code has not expired, whose account (when named) is this one and whose
 * minimum the deposit meets has its pending bonus granted on it (see activatePending); one
 * whose code expired is `expired`, its pending bonus with it.
 */
export async function grantArmedOnDeposit(run: RunBound, account: BonusAccountRow, deposit: Dec): Promise<void> {
  const armed = await run<ArmedRow>(ARMED_OF_CUSTOMER.bind({ customer_id: account.customer_id }));
  for (const r of armed) {
    const pending = r.bonus_id ? await one<BonusRow>(run, LOCK_BONUS.bind({ id: r.bonus_id })) : undefined;
    if (r.expires_at && new Date(r.expires_at).getTime() <= Date.now()) {
      await run(APPLY_REDEMPTION.bind({ id: r.id, status: 'expired', bonus_id: r.bonus_id, cost: '0' }));
      if (pending?.status === 'pending') await endBonus(run, pending, 'expired', 'code_expired');
      continue;
    }
    if (pending && pending.status !== 'pending') continue;
    if (r.login !== null && r.login !== account.login) continue;
    if (pending?.account_id && pending.account_id !== account.id) continue;
    if (r.min_deposit !== null && deposit.lt(r.min_deposit)) continue;
    const [program] = await run<ProgramTerms>(PROGRAM_TERMS.bind({ id: r.bonus_program_id }));
    if (!program || ineligible(program, account)) continue;
    let amount = grantAmount(program, deposit);
    let spendOf: CampaignRow | undefined;
    if (r.campaign_id) {
      const [campaign] = await run<CampaignRow>(LOCK_CAMPAIGN_BY_ID.bind({ id: r.campaign_id }));
      if (campaign?.budget_type === 'spend') {
        amount = D.min(amount, dec(campaign.budget_limit!).minus(campaign.budget_used));
        spendOf = campaign;
      }
    }
    if (amount.lte(0)) continue;
    let granted: boolean;
    if (pending) granted = (await activatePending(run, pending, program, account, amount)) !== 'blocked';
    else {
      // An armed redemption from before pending bonuses existed: granted as it always was.
      const bonus = await grantOnAccount(run, program, account, amount, { type: 'promo', id: r.promo_code_id }, 'skip');
      granted = bonus !== null;
      if (bonus)
        await run(
          APPLY_REDEMPTION.bind({
            id: r.id,
            status: bonus.status === 'on_hold' ? 'on_hold' : 'applied',
            bonus_id: bonus.id,
            cost: amount.toFixed(2),
          }),
        );
    }
    if (granted && spendOf) await run(USE_BUDGET.bind({ id: spendOf.id, amount: amount.toFixed(2) }));
  }
}
