import type { RedisClient } from '../../platform/redis';
import type { OutboxEvent } from '../events/consumers';
import type { WebhookEvent } from '../webhooks/webhook-body';

/**
 * The live feed: every domain event, once the outbox relay has handed it over, is published on
 * one Redis pub/sub channel, and every API process subscribes to it to serve its streams.
 * Pub/sub, not Streams: the outbox table already is the durable, ordered log a reconnecting
 * client replays from, so the feed only has to carry what happens while a process listens. A
 * process that loses its subscription ends its streams, and their clients resume from the table.
 */
export interface LiveEvent {
  /** domain_events.seq as decimal text: the SSE `id:`. */
  seq: string;
  /**
   * domain_events.publication_seq as decimal text: the order the relay handed the event over
   * in, which is the order the feed carries events. A resume continues from it.
   */
  published: string;
  id: string;
  type: string;
  /** ISO time with milliseconds, as webhooks deliver it. */
  created_at: string;
  customer_id: string | null;
  data: Record<string, unknown>;
}

export function liveEventsChannel(prefix: string): string {
  return `${prefix}:live:events`;
}

export function toLiveEvent(e: OutboxEvent): LiveEvent {
  return {
    seq: e.seq,
    published: e.publicationSeq ?? e.seq,
    id: e.id,
    type: e.type,
    created_at: new Date(e.createdAt).toISOString(),
    customer_id: e.customerId,
    data: e.data,
  };
}

/** What a stream's `data:` carries: the JSON webhooks deliver for the event. */
export function wireEvent(e: LiveEvent): WebhookEvent {
  return { id: e.id, type: e.type as WebhookEvent['type'], sequence: Number(e.seq), created_at: e.created_at, data: e.data };
}

/**
 * Publishes events the relay has just committed as handed over. Best effort: a message lost
 * here reaches a client only when it reconnects (Last-Event-ID replays it from the table).
 */
export async function publishLive(redis: RedisClient, prefix: string, events: readonly OutboxEvent[]): Promise<void> {
  if (events.length === 0) return;
  await redis.publish(liveEventsChannel(prefix), JSON.stringify(events.map(toLiveEvent)));
}
