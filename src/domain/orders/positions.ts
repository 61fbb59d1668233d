import type { EntityManager } from '@mikro-orm/postgresql';
import { PendingOrder } from '../../entities/pending-order.entity';

/** Pending orders of an account that may still become positions (pending, or triggered and resting). */
export function countWaitingPendingOrders(em: EntityManager, accountId: string): Promise<number> {
  return em.count(PendingOrder, { account: accountId, status: { $in: ['pending', 'triggered'] } });
}
