import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { DEPOSIT_STATUSES, DepositIntent } from '../../entities/deposit-intent.entity';
import { money } from '../../platform/decimal';
import { errors, fieldError } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import type { StaffCaller } from '../../platform/caller';
import type { QuoteStore } from '../prices/quote-store';
import { findPage, type Paging } from '../../db/find-page';
import { credit, emit, staffDepositView, type StaffDepositView } from './deposit-intents';

/**
 * The staff side of provider deposits: the review queue, and approving (crediting what was
 * received, converted like a transfer) or rejecting a deposit held in `review`.
 */
export const DepositQueueQuery = z.object({
  status: z.enum(DEPOSIT_STATUSES).optional(),
  provider_id: z.uuid().optional(),
  from: z.iso.datetime({ offset: true }).optional().describe('Created at or after (ISO 8601)'),
  to: z.iso.datetime({ offset: true }).optional().describe('Created before (ISO 8601)'),
});

export async function listDeposits(em: EntityManager, filter: z.output<typeof DepositQueueQuery>, paging: Paging) {
  const where: Record<string, unknown> = {};
  if (filter.status) where.status = filter.status;
  if (filter.provider_id) where.provider = filter.provider_id;
  if (filter.from || filter.to)
    where.createdAt = {
      ...(filter.from ? { $gte: new Date(filter.from) } : {}),
      ...(filter.to ? { $lt: new Date(filter.to) } : {}),
    };
  return findPage(em, DepositIntent, where, paging, { orderBy: { createdAt: 'desc', id: 'desc' } }, staffDepositView);
}

export async function staffDeposit(em: EntityManager, id: string): Promise<StaffDepositView> {
  const intent = await em.findOne(DepositIntent, id);
  if (!intent) throw errors.notFound('Deposit');
  return staffDepositView(intent);
}

async function lockInReview(tx: EntityManager, id: string): Promise<DepositIntent> {
  const intent = await tx.findOne(DepositIntent, id, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  if (!intent) throw errors.notFound('Deposit');
  if (intent.status !== 'review')
    throw errors.conflict('DEPOSIT_NOT_IN_REVIEW', `The deposit is ${intent.status}, not in review`);
  return intent;
}

/**
 * Staff settle a deposit held in review by crediting what was received (or `amount`, in the
 * received currency), converted into the account's currency as a transfer converts. Audited.
 */
export async function approveDeposit(
  em: EntityManager,
  quotes: QuoteStore,
  actor: StaffCaller,
  id: string,
  amount: number | undefined,
): Promise<StaffDepositView> {
  return em.transactional(async (tx) => {
    const intent = await lockInReview(tx, id);
    const before = staffDepositView(intent);
    const received = (intent.review as { received?: { amount: string; currency: string } } | null)?.received ?? {
      amount: intent.amount,
      currency: intent.currency,
    };
    const paid = amount !== undefined ? money(amount) : money(received.amount);
    try {
      await credit(tx, quotes, intent, paid, received.currency, intent.externalId ?? null);
    } catch (err) {
      if (err instanceof Error && err.message.startsWith('no quote converts'))
        throw fieldError('body', ['amount'], `No quote converts ${received.currency} into the account's currency`);
      throw err;
    }
    intent.decidedAt = new Date();
    intent.decidedBy = actor.userId;
    intent.updatedAt = new Date();
    const after = staffDepositView(intent);
    recordAudit(tx, actor, { action: 'deposit.approved', entityType: 'deposit', entityId: id, before, after });
    return after;
  });
}

export async function rejectDeposit(
  em: EntityManager,
  actor: StaffCaller,
  id: string,
  reason: string,
): Promise<StaffDepositView> {
  return em.transactional(async (tx) => {
    const intent = await lockInReview(tx, id);
    const before = staffDepositView(intent);
    intent.status = 'failed';
    intent.reason = reason;
    intent.decidedAt = new Date();
    intent.decidedBy = actor.userId;
    intent.updatedAt = new Date();
    const after = staffDepositView(intent);
    recordAudit(tx, actor, { action: 'deposit.rejected', entityType: 'deposit', entityId: id, before, after });
    emit(tx, intent, 'deposit.failed');
    return after;
  });
}
