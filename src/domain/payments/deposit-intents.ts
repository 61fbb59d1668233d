import { evaluateFraud, recordSignal } from '../fraud/evaluate';
import { executeBoundInTransaction } from '../../db/bound-statement';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Account } from '../../entities/account.entity';
import { DEPOSIT_STATUSES, DepositIntent, type DepositStatus } from '../../entities/deposit-intent.entity';
import { Integration } from '../../entities/integration.entity';
import { dec, money, type Dec } from '../../platform/decimal';
import { errors, fieldError } from '../../platform/errors';
import { lockAccounts } from '../accounts/accounts';
import { assertDepositAllowed } from '../compliance/limits';
import { recordEvent } from '../events/outbox';
import { bookDeposit, bookDepositReversal } from '../money/deposits';
import { CurrencyCode, MoneyText } from '../../platform/money-text';
import { convertAtDealerRate, CurrencyConverter } from '../prices/conversion';
import type { QuoteStore } from '../prices/quote-store';
import { pspConfig } from './integration-views';
import { pspAdapter, type PaymentReport } from './adapters';
import { findPage, type Paging } from '../../db/find-page';

/** How long a customer has to pay before the intent expires. */
export const INTENT_TTL_MS = 30 * 60 * 1000;

/**
 * The life of a deposit. `completed`, `failed`, `expired` and `cancelled` end it, apart from
 * the two reversals of a completed one. Anything else a provider or a sweep asks for is
 * ignored (and logged by the caller): a late or out-of-order callback never moves money twice
 * or undoes a decision.
 */
const NEXT: Record<DepositStatus, readonly DepositStatus[]> = {
  pending: ['processing', 'completed', 'failed', 'expired', 'cancelled', 'review'],
  processing: ['completed', 'failed', 'expired', 'cancelled', 'review'],
  review: ['completed', 'failed'],
  completed: ['refunded', 'charged_back'],
  failed: [],
  expired: [],
  cancelled: [],
  refunded: [],
  charged_back: [],
};

export function mayMove(from: DepositStatus, to: DepositStatus): boolean {
  return NEXT[from].includes(to);
}

export const PaidSchema = z.object({ amount: MoneyText, currency: CurrencyCode });

export const DepositReviewSchema = z
  .object({
    expected: PaidSchema,
    received: PaidSchema.nullable().describe('Null while a deposit held for a fraud review is not paid yet'),
    reason: z
      .enum(['mismatch', 'fraud_review'])
      .optional()
      .describe('`mismatch`: paid amount or currency differs; `fraud_review`: held by a fraud rule when it was created'),
  })
  .describe('Why it is in review: what the intent asked for and what the provider reported paid');

export const DepositIntentSchema = z.object({
  id: z.uuid(),
  provider_id: z.uuid(),
  status: z.enum(DEPOSIT_STATUSES),
  amount: MoneyText,
  currency: CurrencyCode,
  login: z.int().describe('The account credited: the wallet unless the request named one of your trading accounts'),
  redirect_url: z
    .string()
    .meta({ format: 'uri' })
    .optional()
    .describe("The provider's payment page, when its adapter has one (the simulator has none)"),
  external_id: z.string().nullable().describe("The provider's id of the payment, once it called back"),
  credited_amount: MoneyText.nullable().describe('What the account was credited, in its currency, once completed'),
  reason: z.string().nullable(),
  expires_at: z.iso.datetime(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type DepositIntentView = z.output<typeof DepositIntentSchema>;

export const StaffDepositSchema = DepositIntentSchema.extend({
  customer_id: z.uuid(),
  review: DepositReviewSchema.nullable().describe('Why it is (or was) held in review; null when it never was'),
  decided_at: z.iso.datetime().nullable(),
  decided_by: z.uuid().nullable(),
});
export type StaffDepositView = z.output<typeof StaffDepositSchema>;

export function depositIntentView(i: DepositIntent): DepositIntentView {
  return {
    id: i.id,
    provider_id: i.provider.id,
    status: i.status,
    amount: i.amount,
    currency: i.currency,
    login: Number(i.login),
    ...(i.redirectUrl ? { redirect_url: i.redirectUrl } : {}),
    external_id: i.externalId ?? null,
    credited_amount: i.creditedAmount ?? null,
    reason: i.reason ?? null,
    expires_at: i.expiresAt.toISOString(),
    created_at: i.createdAt.toISOString(),
    updated_at: i.updatedAt.toISOString(),
  };
}

export function staffDepositView(i: DepositIntent): StaffDepositView {
  return {
    ...depositIntentView(i),
    customer_id: i.customer.id,
    review: (i.review as StaffDepositView['review']) ?? null,
    decided_at: i.decidedAt?.toISOString() ?? null,
    decided_by: i.decidedBy ?? null,
  };
}

export const DepositIntentCreateSchema = z.strictObject({
  provider_id: z.uuid(),
  amount: z.number(),
  currency: CurrencyCode,
  login: z.int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
});

export interface DepositIntentRequest {
  provider_id: string;
  amount: number;
  currency: string;
  login?: number | undefined;
}

/** What each event about a deposit carries: the staff view (webhooks and the back office read it). */
export function emit(
  tx: EntityManager,
  intent: DepositIntent,
  type: Parameters<typeof recordEvent>[1]['type'],
  extra: Record<string, unknown> = {},
) {
  recordEvent(tx, {
    type,
    aggregateType: 'deposit',
    aggregateId: intent.id,
    customerId: intent.customer.id,
    data: { ...staffDepositView(intent), ...extra },
  });
}

/**
 * POST /customers/me/deposits: a pending intent to pay `amount` `currency` through a provider,
 * into the wallet or one of the caller's trading accounts. The provider's currencies and
 * bounds, and the verification level's daily deposit limit, are checked here, before the
 * customer pays: a payment that arrives is credited whatever the limits say by then.
 */
export async function createDepositIntent(
  em: EntityManager,
  customerId: string,
  input: DepositIntentRequest,
): Promise<DepositIntentView> {
  const provider = await em.findOne(Integration, { id: input.provider_id, kind: 'psp', enabled: true });
  if (!provider)
    throw fieldError('body', ['provider_id'], 'No enabled payment provider has this id (GET /customers/me/payment-methods)');
  const config = pspConfig(provider);
  if (!config.currencies.includes(input.currency))
    throw fieldError('body', ['currency'], `This provider takes ${config.currencies.join(', ')}`, 'literal_error');
  const amount = dec(input.amount);
  if (amount.decimalPlaces() > 2)
    throw fieldError('body', ['amount'], 'Decimal input should have no more than 2 decimal places', 'decimal_max_places');
  if (amount.lt(config.min_amount) || amount.gt(config.max_amount))
    throw fieldError(
      'body',
      ['amount'],
      `This provider takes ${money(config.min_amount).toFixed(2)} to ${money(config.max_amount).toFixed(2)} ${input.currency}`,
      amount.lt(config.min_amount) ? 'greater_than_equal' : 'less_than_equal',
    );
  const account =
    input.login === undefined
      ? await em.findOne(Account, { customer: customerId, kind: 'wallet' })
      : await em.findOne(Account, { customer: customerId, login: String(input.login) });
  if (!account) throw errors.notFound('Account');
  if (account.kind !== 'wallet' && account.kind !== 'live')
    throw fieldError('body', ['login'], `A ${account.kind} account takes no deposits: name your wallet or a live account`);
  return em.transactional(async (tx) => {
    await assertDepositAllowed(tx, customerId, amount, input.currency);
    const intent = tx.create(DepositIntent, {
      provider,
      customer: customerId,
      account,
      login: account.login,
      amount: money(amount).toFixed(2),
      currency: input.currency,
      expiresAt: new Date(Date.now() + INTENT_TTL_MS),
    });
    intent.redirectUrl = pspAdapter(provider.adapter).paymentPage(provider.config, intent.id);
    await tx.flush();
    emit(tx, intent, 'deposit.created');
    // A block refuses the intent (nothing is kept); a review holds it before the customer pays.
    const verdict = await evaluateFraud(
      tx,
      'deposit',
      { customerId, amount: intent.amount, currency: intent.currency },
      { type: 'deposit_intent', id: intent.id },
    );
    if (verdict.decision === 'review') {
      intent.status = 'review';
      intent.review = { expected: { amount: intent.amount, currency: intent.currency }, received: null, reason: 'fraud_review' };
      // The event reaches the customer's stream: it says "in review", never that a fraud rule put it there.
      emit(tx, intent, 'deposit.review', {
        review: { expected: { amount: intent.amount, currency: intent.currency }, received: null },
      });
    }
    return depositIntentView(intent);
  });
}

/**
 * The customer gives up a deposit it has not paid: `cancelled`. A payment the provider reports
 * for it afterwards is ignored (and logged) like any report its state does not allow.
 */
export async function cancelOwnDeposit(em: EntityManager, customerId: string, id: string): Promise<DepositIntentView> {
  return em.transactional(async (tx) => {
    const intent = await tx.findOne(
      DepositIntent,
      { id, customer: customerId },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    if (!intent) throw errors.notFound('Deposit');
    if (!mayMove(intent.status, 'cancelled'))
      throw errors.conflict('DEPOSIT_NOT_PENDING', `The deposit is ${intent.status}: only a pending deposit can be cancelled`);
    intent.status = 'cancelled';
    intent.updatedAt = new Date();
    return depositIntentView(intent);
  });
}

/** The customer's own deposits, newest first. */
export async function listOwnDeposits(em: EntityManager, customerId: string, paging: Paging) {
  return findPage(
    em,
    DepositIntent,
    { customer: customerId },
    paging,
    { orderBy: { createdAt: 'desc', id: 'desc' } },
    depositIntentView,
  );
}

export async function ownDepositIntent(em: EntityManager, customerId: string, id: string): Promise<DepositIntentView> {
  const intent = await em.findOne(DepositIntent, { id, customer: customerId });
  if (!intent) throw errors.notFound('Deposit');
  return depositIntentView(intent);
}

/** What a callback did: `applied`, or why it was ignored (an illegal transition: logged, answered 200). */
export interface CallbackEffect {
  intent: DepositIntent;
  from: DepositStatus;
  to: DepositStatus;
  applied: boolean;
  note?: string;
}

export class UnknownIntent extends Error {}

/**
 * Applies a provider's report to its intent in the caller's transaction (the one that also
 * claimed the report in the inbound log): the intent's row is locked, so reports of one intent
 * apply one after another, and crediting happens in the transaction that makes it `completed`.
 */
export async function applyPaymentReport(
  tx: EntityManager,
  quotes: QuoteStore,
  providerId: string,
  report: PaymentReport,
): Promise<CallbackEffect> {
  const intent = await tx.findOne(
    DepositIntent,
    { id: report.intent_id, provider: providerId },
    { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
  );
  if (!intent) throw new UnknownIntent(`No deposit intent ${report.intent_id} of this provider`);
  const from = intent.status;
  const to: DepositStatus =
    report.status === 'completed' && (report.currency !== intent.currency || !money(report.amount).eq(money(intent.amount)))
      ? 'review'
      : report.status;
  if (report.instrument_fingerprint)
    await recordSignal((statement) => executeBoundInTransaction(tx, statement), 'deposit', {
      customerId: intent.customer.id,
      instrument: report.instrument_fingerprint,
    });
  const review = intent.review as { reason?: string; received?: unknown } | null | undefined;
  if (from === 'review' && review?.reason === 'fraud_review' && report.status === 'completed') {
    // Held by a fraud rule: the payment is noted for staff, who approve (crediting it) or reject.
    intent.externalId ??= report.external_id;
    if (report.instrument_fingerprint) intent.instrumentFingerprint ??= report.instrument_fingerprint;
    intent.review = { ...review, received: { amount: money(report.amount).toFixed(2), currency: report.currency } };
    intent.updatedAt = new Date();
    return { intent, from, to: 'review', applied: false, note: 'held for a fraud review: staff approve or reject it' };
  }
  if (!mayMove(from, to)) return { intent, from, to, applied: false, note: `ignored: ${from} cannot become ${to}` };
  intent.externalId ??= report.external_id;
  if (report.instrument_fingerprint) intent.instrumentFingerprint ??= report.instrument_fingerprint;
  intent.updatedAt = new Date();
  const extra = { external_id: report.external_id };
  switch (to) {
    case 'completed':
      await credit(tx, quotes, intent, money(report.amount), report.currency, report.external_id);
      break;
    case 'review':
      intent.status = 'review';
      intent.review = {
        expected: { amount: intent.amount, currency: intent.currency },
        received: { amount: money(report.amount).toFixed(2), currency: report.currency },
        reason: 'mismatch',
      };
      emit(tx, intent, 'deposit.review', extra);
      break;
    case 'failed':
      intent.status = 'failed';
      intent.reason = 'The provider reported the payment failed';
      emit(tx, intent, 'deposit.failed', extra);
      break;
    case 'charged_back':
    case 'refunded':
      await reverse(tx, intent, to, report.external_id);
      break;
    default:
      intent.status = to;
  }
  return { intent, from, to, applied: true };
}

/**
 * Credits a paid intent: the provider's fee when the customer bears it, then the amount
 * converted into the account's currency as a transfer converts (the dealer side, rounded
 * down), booked through the one deposit booking. The intent becomes `completed` in the same
 * transaction.
 */
export async function credit(
  tx: EntityManager,
  quotes: QuoteStore,
  intent: DepositIntent,
  paid: Dec,
  currency: string,
  externalId: string | null,
): Promise<void> {
  const account = (await lockAccounts(tx, [intent.account.id])).get(intent.account.id)!;
  const provider = await tx.findOneOrFail(Integration, intent.provider.id);
  const fee = pspConfig(provider).fee;
  let net = paid;
  if (fee.borne_by === 'customer' && fee.type !== 'none') {
    const charge = fee.type === 'percent' ? money(paid.times(fee.value).div(100)) : money(fee.value);
    if (charge.lt(paid)) net = paid.minus(charge);
  }
  let amount = net;
  if (currency !== account.currency) {
    const rate = await CurrencyConverter.dealerRateBetween(tx, quotes, currency, account.currency);
    if (!rate) throw new Error(`no quote converts ${currency} into ${account.currency}`);
    amount = convertAtDealerRate(net, rate);
  }
  const view = await bookDeposit(tx, account, amount, {
    reference: { type: 'deposit_intent', id: intent.id },
    comment: `Deposit through ${provider.name}`,
    eventData: { provider_id: provider.id, external_id: externalId, intent_id: intent.id },
  });
  intent.status = 'completed';
  intent.creditedAmount = view.amount;
  intent.creditedCurrency = account.currency;
}

/**
 * A charge-back or refund of a completed deposit: what it credited comes back out, even below
 * zero, through the posting module's `deposit_reversal` flow, whose hooks are where a fraud
 * case and the forfeit of bonuses granted on this deposit will attach; the reversal's event
 * (`deposit.charged_back` / `deposit.refunded`) is written in the same transaction.
 */
async function reverse(tx: EntityManager, intent: DepositIntent, to: 'charged_back' | 'refunded', externalId: string) {
  const account = (await lockAccounts(tx, [intent.account.id])).get(intent.account.id)!;
  await bookDepositReversal(
    tx,
    account,
    dec(intent.creditedAmount ?? '0'),
    to === 'charged_back' ? 'chargeback' : 'deposit_refund',
    {
      type: 'deposit_intent',
      id: intent.id,
    },
  );
  intent.status = to;
  emit(tx, intent, to === 'charged_back' ? 'deposit.charged_back' : 'deposit.refunded', {
    external_id: externalId,
    balance: account.balance,
  });
}

/** The sweep: intents nobody paid in time become `expired` (rows another transaction holds wait for the next run). */
export async function expireDueIntents(em: EntityManager, limit = 500): Promise<number> {
  return em.transactional(async (tx) => {
    const due = await tx.find(
      DepositIntent,
      { status: { $in: ['pending', 'processing'] }, expiresAt: { $lte: new Date() } },
      { lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE, limit, orderBy: { expiresAt: 'asc' } },
    );
    for (const intent of due) {
      intent.status = 'expired';
      intent.updatedAt = new Date();
    }
    return due.length;
  });
}
