import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Customer, type LifecycleStage } from '../../entities/customer.entity';
import { executeNamed } from '../../db/bound-statement';
import { dec } from '../../platform/decimal';
import { defineConsumer, type OutboxEvent } from '../events/consumers';
import { recordEvent } from '../events/outbox';
import type { AccountRolloverStep } from '../eod/account-chunk';
import { MARK_DORMANT } from './crm.queries';

/**
 * A stage's place in the order: the lifecycle only moves to a later place (skipping some is
 * fine), except that `active` and `dormant` share one and alternate, and nothing leaves `closed`.
 */
const RANK: Record<LifecycleStage, number> = {
  lead: 0,
  registered: 1,
  verified: 2,
  funded: 3,
  active: 4,
  dormant: 4,
  closed: 5,
};

export function canMoveLifecycle(from: LifecycleStage, to: LifecycleStage): boolean {
  if (from === to || from === 'closed') return false;
  if ((from === 'active' && to === 'dormant') || (from === 'dormant' && to === 'active')) return true;
  return RANK[to] > RANK[from];
}

/**
 * Moves a customer (loaded in `em`, best locked) to `to` when the order allows it, with its
 * `customer.lifecycle_changed` event in the same unit of work. Answers whether it moved.
 */
export function moveLifecycle(em: EntityManager, customer: Customer, to: LifecycleStage): boolean {
  const from = customer.lifecycle;
  if (!canMoveLifecycle(from, to)) return false;
  customer.lifecycle = to;
  customer.updatedAt = new Date();
  recordEvent(em, {
    type: 'customer.lifecycle_changed',
    aggregateType: 'customer',
    aggregateId: customer.id,
    customerId: customer.id,
    data: { customer_id: customer.id, from, to },
  });
  return true;
}

const STAGE_OF_EVENT: Record<string, LifecycleStage> = {
  'customer.verified': 'verified',
  'deposit.completed': 'funded',
  'order.closed': 'active',
};

/**
 * The lifecycle follows the customer's own events: the first `customer.verified`, the first
 * completed deposit (which also records `ftd_at` and `ftd_amount`) and each closed trade. It
 * takes the events in the relay's transaction, so a stage commits with the events' published
 * mark, once, and in the order they were written; the customers are locked for it.
 */
export const LifecycleConsumer = defineConsumer({
  name: 'customer-lifecycle',
  wants: (event: OutboxEvent) => event.customerId !== null && event.type in STAGE_OF_EVENT,
  take: async (tx, events) => {
    const ids = [...new Set(events.map((e) => e.customerId!))];
    const customers = await tx.find(Customer, { id: { $in: ids } }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const byId = new Map(customers.map((c) => [c.id, c]));
    for (const event of events) {
      const customer = byId.get(event.customerId!);
      if (!customer) continue;
      if (event.type === 'deposit.completed' && !customer.ftdAt) {
        customer.ftdAt = event.createdAt;
        customer.ftdAmount = depositAmount(event.data.amount);
        customer.updatedAt = new Date();
      }
      moveLifecycle(tx, customer, STAGE_OF_EVENT[event.type]!);
    }
    await tx.flush();
    return [];
  },
});

function depositAmount(value: unknown): string | null {
  try {
    return typeof value === 'string' || typeof value === 'number' ? dec(String(value)).toFixed(2) : null;
  } catch {
    return null;
  }
}

/** The end of day's step: the chunk's customers turn dormant when their trading went quiet (MARK_DORMANT). */
export const markDormantAtRollover: AccountRolloverStep = async (em, accounts, rollover) => {
  const customers = [...new Set(accounts.map(({ account }) => account.customer.id))];
  if (customers.length === 0) return;
  await executeNamed(em, MARK_DORMANT.bind({ customer_ids: JSON.stringify(customers), cutoff_at: rollover.cutoffAt }));
};
