import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Account } from '../../entities/account.entity';
import { Withdrawal, WITHDRAWAL_STATUSES, type WithdrawalStatus } from '../../entities/withdrawal.entity';
import { dec, money } from '../../platform/decimal';
import { errors, fieldError } from '../../platform/errors';
import { lockAccounts, unreserved } from '../accounts/accounts';
import { recordAudit } from '../audit/audit';
import { recordEvent } from '../events/outbox';
import type { StaffCaller } from '../../platform/caller';
import { randomUUID } from 'node:crypto';
import { postHold, releaseHold, reserveHold } from '../ledger/holds';
import { postedAccount, runPostingHooks, type Posting } from '../ledger/posting';
import { assertWithdrawalAllowed } from '../compliance/limits';
import { CurrencyCode, MoneyText } from '../../platform/money-text';

/** The largest payment_data accepted, as UTF-8 JSON text. */
export const PAYMENT_DATA_MAX_BYTES = 4096;

/** The withdrawal request result of endpoint 13 (202: accepted, awaiting approval). */
export const WithdrawalRequestResultSchema = z.object({
  transaction_id: z.uuid(),
  amount: MoneyText,
  currency: CurrencyCode,
  status: z.literal('pending'),
  created_at: z.iso.datetime(),
  max_withdrawable: MoneyText.describe('What the wallet can still withdraw, with this request reserved'),
  message: z.string(),
});
export type WithdrawalRequestResult = z.output<typeof WithdrawalRequestResultSchema>;

/** A withdrawal as staff list it, as its customer sees it, and as its events carry it: never its payment data. */
export const WithdrawalSchema = z.object({
  id: z.uuid().describe('The transaction_id of the request'),
  login: z.int().describe("The wallet's login"),
  amount: MoneyText,
  currency: CurrencyCode,
  status: z.enum(WITHDRAWAL_STATUSES),
  reason: z.string().nullable().describe('Why it was rejected; null unless rejected'),
  comment: z.string().nullable(),
  created_at: z.iso.datetime(),
  decided_at: z.iso.datetime().nullable().describe('Null while pending'),
});
export type WithdrawalView = z.output<typeof WithdrawalSchema>;

/** One withdrawal for staff who pay it out: the view with the customer, who decided, and where the money goes. */
export const WithdrawalDetailSchema = WithdrawalSchema.extend({
  customer_id: z.uuid(),
  decided_by: z.uuid().nullable().describe('The staff user who decided (for an API token, the user who issued it)'),
  payment_data: z.record(z.string(), z.unknown()).describe('As the customer sent it'),
  review_reason: z
    .string()
    .nullable()
    .describe('Set while a fraud rule holds it for review (see the fraud case); null otherwise'),
});
export type WithdrawalDetailView = z.output<typeof WithdrawalDetailSchema>;

export function withdrawalView(w: Withdrawal): WithdrawalView {
  return {
    id: w.id,
    login: Number(w.login),
    amount: w.amount,
    currency: w.currency,
    status: w.status,
    reason: w.reason ?? null,
    comment: w.comment ?? null,
    created_at: w.createdAt.toISOString(),
    decided_at: w.decidedAt?.toISOString() ?? null,
  };
}

export function withdrawalDetailView(w: Withdrawal): WithdrawalDetailView {
  return {
    ...withdrawalView(w),
    customer_id: w.customer.id,
    decided_by: w.decidedBy ?? null,
    payment_data: w.paymentData,
    review_reason: w.reviewReason ?? null,
  };
}

export interface WithdrawalRequest {
  amount: number;
  payment_data: Record<string, unknown>;
  comment?: string | undefined;
}

/**
 * POST /customers/me/withdraw (endpoint 13): reserves the amount in the caller's wallet and
 * records the request, pending, with its withdrawal.requested event, in one transaction
 * holding the wallet's row. Withdrawals draw on the wallet only: money
 * in a trading account is transferred to the wallet first, where no open position can need it.
 */
export async function requestWithdrawal(
  em: EntityManager,
  customerId: string,
  input: WithdrawalRequest,
): Promise<WithdrawalRequestResult> {
  const wallet = await em.findOne(Account, { customer: customerId, kind: 'wallet' }, { fields: ['id'] });
  if (!wallet) throw errors.notFound('Wallet');
  const amount = money(input.amount);
  return em.transactional(async (tx) => {
    const locked = (await lockAccounts(tx, [wallet.id])).get(wallet.id)!;
    const id = randomUUID();
    // One posting for both phases (see Posting): a hook may key what its `before` learnt by it.
    const posting: Posting = {
      flow: 'withdrawal',
      account: postedAccount(locked),
      amount: amount.neg().toFixed(2),
      reference: { type: 'withdrawal', id },
      request: { ...input },
    };
    await runPostingHooks(tx, 'before', posting);
    await assertWithdrawalAllowed(tx, customerId, amount, locked.currency);
    const available = unreserved(locked);
    if (amount.gt(available))
      throw fieldError(
        'body',
        ['amount'],
        `The amount exceeds what can be withdrawn: ${available.toFixed(2)} ${locked.currency} available`,
      );
    reserveHold(locked, amount);
    const withdrawal = tx.create(Withdrawal, {
      id,
      account: locked,
      customer: customerId,
      login: locked.login,
      amount: amount.toFixed(2),
      currency: locked.currency,
      paymentData: input.payment_data,
      comment: input.comment ?? null,
    });
    // Policy on a recorded request (a fraud review holds it) runs with the reserve booked.
    await runPostingHooks(tx, 'after', posting);
    recordEvent(tx, {
      type: 'withdrawal.requested',
      aggregateType: 'withdrawal',
      aggregateId: withdrawal.id,
      customerId,
      data: withdrawalView(withdrawal),
    });
    return {
      transaction_id: withdrawal.id,
      amount: withdrawal.amount,
      currency: withdrawal.currency,
      status: 'pending',
      created_at: withdrawal.createdAt.toISOString(),
      max_withdrawable: unreserved(locked).toFixed(2),
      message: `Your withdrawal of ${withdrawal.amount} ${withdrawal.currency} was submitted for approval. The amount is reserved until staff approve or reject it.`,
    };
  });
}

type WithdrawalDecision = { kind: 'approve' } | { kind: 'reject'; reason: string };

/**
 * Approves (the wallet is debited through the ledger and the reserve released: `completed`)
 * or rejects (the reserve released: `rejected`, with the reason) a pending withdrawal, with
 * its audit row and event, in one transaction. The wallet row is locked first and then the
 * withdrawal's, the order requestWithdrawal and transfers lock in, so two decisions on one
 * withdrawal take turns: the second finds it decided and is 409 WITHDRAWAL_NOT_PENDING.
 */
export async function decideWithdrawal(
  em: EntityManager,
  actor: StaffCaller,
  id: string,
  decision: WithdrawalDecision,
): Promise<WithdrawalView> {
  const found = await em.findOne(Withdrawal, id, { fields: ['account'] });
  if (!found) throw errors.notFound('Withdrawal');
  const accountId = found.account.id;
  return em.transactional(async (tx) => {
    const wallet = (await lockAccounts(tx, [accountId])).get(accountId)!;
    const withdrawal = await tx.findOneOrFail(Withdrawal, id, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (withdrawal.status !== 'pending')
      throw errors.conflict('WITHDRAWAL_NOT_PENDING', `This withdrawal is already ${withdrawal.status}`);
    const before = withdrawalView(withdrawal);
    const amount = dec(withdrawal.amount);
    if (decision.kind === 'approve') {
      postHold(tx, wallet, amount, 'withdrawal', { type: 'withdrawal', id: withdrawal.id }, 'Withdrawal paid out');
      withdrawal.status = 'completed';
    } else {
      releaseHold(wallet, amount);
      withdrawal.status = 'rejected';
      withdrawal.reason = decision.reason;
    }
    withdrawal.decidedAt = new Date();
    withdrawal.decidedBy = actor.userId;
    const view = withdrawalView(withdrawal);
    const done: WithdrawalStatus = withdrawal.status;
    recordAudit(tx, actor, {
      action: done === 'completed' ? 'withdrawal.approved' : 'withdrawal.rejected',
      entityType: 'withdrawal',
      entityId: withdrawal.id,
      before,
      after: view,
    });
    recordEvent(tx, {
      type: done === 'completed' ? 'withdrawal.approved' : 'withdrawal.rejected',
      aggregateType: 'withdrawal',
      aggregateId: withdrawal.id,
      customerId: withdrawal.customer.id,
      data: view,
    });
    return view;
  });
}
