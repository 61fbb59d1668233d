import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainEvent } from '../../entities/domain-event.entity';
import type { EventType } from './event-types';

/**
 * Adds a domain event to the caller's unit of work, so it commits with the change that
 * caused it (the transactional outbox). The outbox relay (relay.ts) hands it to its consumers.
 */
export function recordEvent(
  em: EntityManager,
  event: {
    type: EventType;
    aggregateType: string;
    aggregateId: string | number;
    customerId?: string | null;
    data: Record<string, unknown>;
  },
): DomainEvent {
  return em.create(DomainEvent, {
    type: event.type,
    aggregateType: event.aggregateType,
    aggregateId: String(event.aggregateId),
    customerId: event.customerId ?? null,
    data: event.data,
  });
}
