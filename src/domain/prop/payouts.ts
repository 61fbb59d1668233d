import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Account } from '../../entities/account.entity';
import { Payout, PAYOUT_STATUSES } from '../../entities/payout.entity';
import { CurrencyConverter } from '../prices/conversion';
import { D, dec, money, type Dec } from '../../platform/decimal';
import { errors, fieldError } from '../../platform/errors';
import { lockAccounts } from '../accounts/accounts';
import { recordAudit } from '../audit/audit';
import { recordEvent } from '../events/outbox';
import type { Caller, StaffCaller } from '../../platform/caller';
import { postHold, releaseHold, reserveHold } from '../ledger/holds';
import { firstDeposit } from '../ledger/ledger';
import { postedAccount, postToLedger, runPostingHooks } from '../ledger/posting';
import { assertCreditFits } from '../../platform/bounds';
import { loadMetrics } from '../accounts/account-metrics';
import { CurrencyCode, MoneyText } from '../../platform/money-text';
import { convertAtDealerRate } from '../prices/conversion';
import { challengeTermsOf } from './challenges';
import type { QuoteStore } from '../prices/quote-store';
import { customerScopeOf, inScopeOr404 } from '../../platform/customer-scope';

/** A payout as every route answers it and as its events carry it. */
export const PayoutSchema = z.object({
  id: z.uuid(),
  login: z.int().describe("The prop account's login"),
  amount: MoneyText.describe("In the prop account's currency"),
  currency: CurrencyCode,
  status: z.enum(PAYOUT_STATUSES),
  reason: z.string().nullable().describe('Why it was rejected; null unless rejected'),
  created_at: z.iso.datetime(),
  decided_at: z.iso.datetime().nullable().describe('Null while pending'),
  decided_by: z.uuid().nullable().describe('The staff user who decided (for an API token, the user who issued it)'),
});
export type PayoutView = z.output<typeof PayoutSchema>;

export function payoutView(p: Payout): PayoutView {
  return {
    id: p.id,
    login: Number(p.login),
    amount: p.amount,
    currency: p.currency,
    status: p.status,
    reason: p.reason ?? null,
    created_at: p.createdAt.toISOString(),
    decided_at: p.decidedAt?.toISOString() ?? null,
    decided_by: p.decidedBy ?? null,
  };
}

/**
 * The starting balance of a prop account: its first deposit, the
 * firm's capital. Read while the account is locked; none yet is 0.
 */
async function startingBalance(tx: EntityManager, accountId: string): Promise<Dec> {
  const amount = await firstDeposit(tx, accountId);
  return amount === null ? new D(0) : dec(amount);
}

/**
 * What a prop account can still pay out: its profit, the smaller of its
 * balance and its equity, less the starting balance, less what pending payouts reserve (a prop
 * account's `reserved` holds nothing else: withdrawals draw on the wallet only). A loss still
 * open counts against it: the balance is not profit while open positions can give it back, and
 * paying it out would leave the firm's capital to cover the loss. An open gain does not count:
 * it is not money until closed. Never below 0. A payout being decided passes its own amount as
 * `ownHold`: its own reserve is what it may pay, not what stands against it. Read under the account's lock, which order opens
 * and closes take too, so the open positions priced here are the ones that stand.
 */
async function payable(tx: EntityManager, quotes: QuoteStore, account: Account, ownHold: Dec = new D(0)): Promise<Dec> {
  const starting = await startingBalance(tx, account.id);
  await tx.populate(account, ['group']);
  const { balance, equity } = await loadMetrics(tx, quotes, account);
  return D.max(D.min(balance, equity).minus(dec(account.reserved).minus(ownHold)).minus(starting), 0);
}

/**
 * POST /prop/payouts: reserves `amount` of a prop account's profit and records the payout,
 * pending, with its payout.requested event (and, for staff, an audit row), in one
 * transaction holding the account's row. A customer asks for its own prop accounts only
 * (another's login is 404, as one that does not exist).
 */
export async function requestPayout(
  em: EntityManager,
  quotes: QuoteStore,
  caller: Caller,
  input: { login: number; amount: number },
): Promise<PayoutView> {
  const found = inScopeOr404(
    customerScopeOf(caller),
    await em.findOne(Account, { login: String(input.login) }, { fields: ['id', 'kind', 'customer'] }),
    (a) => a.customer.id,
    'Account',
  );
  if (found.kind !== 'prop')
    throw fieldError('body', ['login'], `A ${found.kind} account has no payouts: only prop accounts pay out their profit`);
  // A challenge's phases are evaluations: only its funded stage pays out, and then the trader's share.
  const challenge = await challengeTermsOf(em, found.id);
  if (challenge && challenge.status !== 'funded')
    throw fieldError(
      'body',
      ['login'],
      `This account is a challenge stage (${challenge.status}): only a funded account pays out`,
    );
  const amount = money(input.amount);
  return em.transactional(async (tx) => {
    const account = (await lockAccounts(tx, [found.id])).get(found.id)!;
    const id = randomUUID();
    await runPostingHooks(tx, 'before', {
      flow: 'payout',
      account: postedAccount(account),
      amount: amount.neg().toFixed(2),
      reference: { type: 'payout', id },
      request: { ...input },
    });
    const available = await payable(tx, quotes, account);
    if (amount.gt(available))
      throw fieldError(
        'body',
        ['amount'],
        `The amount exceeds the profit available for payout: ${available.toFixed(2)} ${account.currency} available`,
      );
    reserveHold(account, amount);
    const payout = tx.create(Payout, {
      id,
      account,
      customer: account.customer.id,
      login: account.login,
      amount: amount.toFixed(2),
      currency: account.currency,
      requestedBy: caller.kind === 'customer' ? null : caller.userId,
      profitSplitPct: challenge?.profitSplitPct ?? null,
    });
    const view = payoutView(payout);
    if (caller.kind !== 'customer')
      recordAudit(tx, caller, { action: 'payout.requested', entityType: 'payout', entityId: payout.id, after: view });
    recordEvent(tx, {
      type: 'payout.requested',
      aggregateType: 'payout',
      aggregateId: payout.id,
      customerId: account.customer.id,
      data: view,
    });
    return view;
  });
}

type PayoutDecision = { kind: 'approve' } | { kind: 'reject'; reason: string };

/**
 * Approves (the prop account is debited and the customer's wallet credited through the
 * ledger, converted at the dealer side of the latest quotes like a transfer, and the reserve
 * released: `approved`) or rejects (the reserve released: `rejected`, with the reason) a
 * pending payout, with its audit row and event, in one transaction. The accounts lock first
 * (in id order, as everything that locks accounts) and then the payout's row, so an approve
 * racing a reject takes turns: the second finds it decided, 409 PAYOUT_NOT_PENDING.
 */
export async function decidePayout(
  em: EntityManager,
  quotes: QuoteStore,
  actor: StaffCaller,
  id: string,
  decision: PayoutDecision,
): Promise<PayoutView> {
  const found = await em.findOne(Payout, id, { fields: ['account', 'customer'] });
  if (!found) throw errors.notFound('Payout');
  const propId = found.account.id;
  const wallet =
    decision.kind === 'approve'
      ? await em.findOne(Account, { customer: found.customer.id, kind: 'wallet' }, { fields: ['id'] })
      : null;
  if (decision.kind === 'approve' && !wallet) throw errors.conflict('WALLET_MISSING', 'The customer has no wallet to credit');
  return em.transactional(async (tx) => {
    const locked = await lockAccounts(tx, wallet ? [propId, wallet.id] : [propId]);
    const prop = locked.get(propId)!;
    const payout = await tx.findOneOrFail(Payout, id, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (payout.status !== 'pending') throw errors.conflict('PAYOUT_NOT_PENDING', `This payout is already ${payout.status}`);
    const before = payoutView(payout);
    const amount = dec(payout.amount);
    if (decision.kind === 'approve') {
      const target = locked.get(wallet!.id)!;
      // The profit may have shrunk since the request (losing trades, open or closed): pay out profit only.
      const available = await payable(tx, quotes, prop, amount);
      if (amount.gt(available))
        throw errors.conflict(
          'PAYOUT_EXCEEDS_PROFIT',
          `The account's profit has fallen to ${available.toFixed(2)} ${prop.currency} since the request; reject it and ask again`,
        );
      const rate = await CurrencyConverter.dealerRateBetween(tx, quotes, prop.currency, target.currency);
      if (!rate)
        throw errors.conflict(
          'PRICE_UNAVAILABLE',
          `No quote converts ${prop.currency} into ${target.currency}: the payout can be approved once one is quoted`,
        );
      // A funded challenge account gives up the whole amount; the trader receives the program's share of it.
      const share = payout.profitSplitPct ? money(amount.times(payout.profitSplitPct).div(100)) : amount;
      const converted = convertAtDealerRate(share, rate);
      // Not a missing quote: the rate is there, the amount is below the wallet currency's cent.
      if (converted.lte(0))
        throw errors.conflict(
          'PAYOUT_TOO_SMALL',
          `${amount.toFixed(2)} ${prop.currency} converts to less than 0.01 ${target.currency}`,
        );
      assertCreditFits(target.balance, converted);
      const reference = { type: 'payout', id: payout.id };
      postHold(tx, prop, amount, 'payout', reference, `Payout to wallet ${target.login}`);
      postToLedger(tx, target, converted, 'payout', reference, `Payout from prop account ${prop.login}`);
      payout.status = 'approved';
      payout.walletAmount = converted.toFixed(2);
      payout.walletCurrency = target.currency;
      payout.rateSource = rate.source;
      payout.rateMultiplier = rate.multiplier.toFixed();
      payout.rateDivisor = rate.divisor.toFixed();
    } else {
      releaseHold(prop, amount);
      payout.status = 'rejected';
      payout.reason = decision.reason;
    }
    payout.decidedAt = new Date();
    payout.decidedBy = actor.userId;
    const view = payoutView(payout);
    const type = payout.status === 'approved' ? 'payout.approved' : 'payout.rejected';
    recordAudit(tx, actor, { action: type, entityType: 'payout', entityId: payout.id, before, after: view });
    recordEvent(tx, { type, aggregateType: 'payout', aggregateId: payout.id, customerId: payout.customer.id, data: view });
    return view;
  });
}
