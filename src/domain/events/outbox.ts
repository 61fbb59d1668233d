import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainEvent } from '../../entities/domain-event.entity';
import { EVENT_TYPES, type EventType } from './event-types';

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

/**
 * One domain event as SQL expressions of the statement that writes it: `:named` (or `?`)
 * parameters, or columns of that statement's own CTEs, each cast to its column's type when it
 * is a bare parameter. `type` and `aggregateType` are literals.
 */
export interface EventRowSql {
  type: EventType;
  aggregateType: string;
  aggregateId: string;
  customerId: string;
  /** jsonb: the event's data, the public view of its aggregate. */
  data: string;
  at: string;
  /** The CTE the event is selected from, one event per row of it; none for exactly one event. */
  from?: string;
}

const KNOWN_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES);

/**
 * The outbox insert as the body of a data-modifying CTE (or a statement of its own), for the
 * hot paths that write an event in the statement making the change it reports: one round trip,
 * and the same transactional-outbox guarantee as recordEvent. The type is checked against the
 * known event types when the statement is composed, at module load, so a typo fails at start-up
 * rather than reaching a consumer. This module is the only code that names the outbox's columns.
 */
export function eventInsertSql(e: EventRowSql): string {
  if (!KNOWN_TYPES.has(e.type)) throw new Error(`unknown event type ${e.type}`);
  if (!/^[a-z_]+$/.test(e.aggregateType)) throw new Error(`bad aggregate type ${e.aggregateType}`);
  return `insert into domain_events (id, created_at, updated_at, type, aggregate_type, aggregate_id, customer_id, data)
  select gen_random_uuid(), ${e.at}, ${e.at}, '${e.type}', '${e.aggregateType}', ${e.aggregateId}, ${e.customerId}, ${e.data}${e.from ? ` from ${e.from}` : ''}
  returning id`;
}
