import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Customer } from '../../entities/customer.entity';
import { Session } from '../../entities/session.entity';
import type { StaffCaller } from '../../platform/caller';
import { inScopeOr404, type CustomerScope } from '../../platform/customer-scope';
import { recordAudit } from '../audit/audit';
import { customerView } from '../customers/customers';
import type { Identity } from '../identity/identity';
import { revokeSessions } from '../identity/sessions';
import { moveLifecycle } from './lifecycle';

/**
 * Closes a customer: lifecycle `closed` for good (its event), the reason kept, every session
 * revoked. It keeps its accounts and money: it may log in again to withdraw, but opens no new
 * account (409 CUSTOMER_CLOSED). Closing a closed customer changes nothing. Audited.
 */
export async function closeCustomer(
  em: EntityManager,
  identity: Identity,
  actor: StaffCaller,
  scope: CustomerScope,
  id: string,
  reason: string,
): Promise<Customer> {
  const { customer, sessionIds } = await em.transactional(async (tx) => {
    const found = await tx.findOne(Customer, id, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const locked = inScopeOr404(scope, found, (c) => c.id, 'Customer');
    if (locked.lifecycle === 'closed') return { customer: locked, sessionIds: [] as string[] };
    const before = customerView(locked);
    moveLifecycle(tx as EntityManager, locked, 'closed');
    locked.closedAt = new Date();
    locked.closeReason = reason;
    const sessions = await tx.find(Session, { principalType: 'customer', principalId: locked.id, revokedAt: null });
    recordAudit(tx as EntityManager, actor, {
      action: 'customer.closed',
      entityType: 'customer',
      entityId: locked.id,
      before,
      after: { ...customerView(locked), reason, sessions_revoked: sessions.length },
    });
    return { customer: locked, sessionIds: sessions.map((x) => x.id) };
  });
  await revokeSessions(em, identity, sessionIds, 'customer_closed');
  return customer;
}
