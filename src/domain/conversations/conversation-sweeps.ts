import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Conversation } from '../../entities/conversation.entity';
import { recordEvent } from '../events/outbox';
import { setStatus } from './conversations';
import { conversationView, PENDING_RESOLVE_DAYS } from './conversation-views';

/** Locks up to `limit` conversations matching `where`, skipping those another sweep holds. */
function dueConversations(em: EntityManager, where: Record<string, unknown>, limit: number): Promise<Conversation[]> {
  return em.find(Conversation, where, { lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE, limit, orderBy: { id: 'asc' } });
}

/**
 * Resolves the `pending` conversations the customer left unanswered for PENDING_RESOLVE_DAYS:
 * a customer message would have moved them to `open`, so the time in `pending` is the silence.
 */
export async function resolveStalePending(em: EntityManager, limit = 500): Promise<number> {
  return em.transactional(async (tx) => {
    const t = tx as EntityManager;
    const now = new Date();
    const stale = await dueConversations(
      t,
      { status: 'pending', statusChangedAt: { $lte: new Date(now.getTime() - PENDING_RESOLVE_DAYS * 86_400_000) } },
      limit,
    );
    for (const c of stale) setStatus(t, c, 'resolved', now);
    await t.flush();
    return stale.length;
  });
}

/** Moves snoozed conversations whose snoozed_until has come back to `open`. */
export async function wakeSnoozed(em: EntityManager, limit = 500): Promise<number> {
  return em.transactional(async (tx) => {
    const t = tx as EntityManager;
    const now = new Date();
    const due = await dueConversations(t, { status: 'snoozed', snoozedUntil: { $lte: now } }, limit);
    for (const c of due) setStatus(t, c, 'open', now);
    await t.flush();
    return due.length;
  });
}

/**
 * Reports each conversation whose first-response time passed without a public staff message,
 * once: sla_breached_at is stamped in the transaction that writes the event.
 */
export async function reportSlaBreaches(em: EntityManager, limit = 500): Promise<number> {
  return em.transactional(async (tx) => {
    const t = tx as EntityManager;
    const now = new Date();
    const due = await dueConversations(
      t,
      { firstResponseAt: null, slaBreachedAt: null, firstResponseDueAt: { $lte: now } },
      limit,
    );
    for (const c of due) {
      c.slaBreachedAt = now;
      recordEvent(t, {
        type: 'conversation.sla_breached',
        aggregateType: 'conversation',
        aggregateId: c.id,
        customerId: c.customerId,
        data: conversationView(c),
      });
    }
    await t.flush();
    return due.length;
  });
}
