import type { EntityManager } from '@mikro-orm/postgresql';
import { Customer, type CustomerAccess } from '../../entities/customer.entity';
import type { StaffCaller } from '../../platform/caller';
import { errors } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import { recordEvent } from '../events/outbox';

/**
 * Sets what a customer may do (`full`, `close_only`, `no_login`), audited, with
 * `customer.access_changed`. Answers whether the customer's sessions must now end (the caller
 * revokes them once this has committed).
 */
export async function setCustomerAccess(
  em: EntityManager,
  actor: StaffCaller,
  customerId: string,
  access: CustomerAccess,
): Promise<boolean> {
  return em.transactional(async (tx) => {
    const customer = await tx.findOne(Customer, customerId, { lockMode: 4 });
    if (!customer) throw errors.notFound('Customer');
    const from = customer.access;
    if (from === access) return false;
    customer.access = access;
    customer.updatedAt = new Date();
    recordAudit(tx, actor, {
      action: 'customer.access_changed',
      entityType: 'customer',
      entityId: customerId,
      before: { access: from },
      after: { access },
    });
    recordEvent(tx, {
      type: 'customer.access_changed',
      aggregateType: 'customer',
      aggregateId: customerId,
      customerId,
      data: { customer_id: customerId, from, to: access },
    });
    return access === 'no_login';
  });
}
