import type { CustomerScope } from '../../platform/customer-scope';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { AppError, fieldError } from '../../platform/errors';
import { WebhookEventSchema } from '../webhooks/webhook-body';
import { wireEvent } from './live-feed';
import { replayAfter, resumePoint } from './replay';
import { executeNamed } from '../../db/bound-statement';
import { readOnReplica } from '../../db/read-replica';
import { EVENT_SEQ_BY_ID, FEED_END } from './streams.queries';

/** How far back the CRM feed reaches: an older cursor is 410 CURSOR_EXPIRED. */
export const FEED_RETENTION_SECONDS = 30 * 24 * 3600;

export const EventFeedQuery = z.object({
  after: z
    .string()
    .max(64)
    .optional()
    .describe(
      'The id of the last event you have (the SSE `id:`, which is the event `sequence`, or the event `id` uuid), or `now`. ' +
        'Omitted: from the oldest event kept',
    ),
  types: z.string().max(2000).optional().describe('Comma-separated event types; omitted: every type'),
  limit: z.coerce.number().int().min(1).max(1000).default(100).describe('At most this many events, 1 to 1000'),
});

/** An event of the feed: exactly what a webhook delivery carries for it. */
export const FeedEventSchema = WebhookEventSchema.extend({});

export const EventFeedSchema = z.object({
  items: z.array(FeedEventSchema).describe('Events in the order they were published (the order streams resume in)'),
  next_after: z
    .string()
    .describe('Pass as `after` to read on: the last event of this page, or the `after` given when the page is empty'),
});
export type EventFeed = z.output<typeof EventFeedSchema>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const cursorExpired = () =>
  new AppError(
    410,
    'CURSOR_EXPIRED',
    'That event is older than the feed keeps (30 days), or unknown: read again from the start (no after)',
  );

/**
 * GET /api/crm/events: the outbox as the streams replay it, in publication order (an event
 * that committed after a later-numbered one comes after it here too, so a reader that resumes
 * from its last event never skips one), paged by the event id a reader last saw.
 */
export function readEventFeed(
  em: EntityManager,
  query: z.output<typeof EventFeedQuery>,
  /** Staff limited to their customers: events about other customers are left out (before the page is cut). */
  staff: CustomerScope['staff'] = null,
): Promise<EventFeed> {
  // On the read replica once it has replayed every commit up to the request: an event id the
  // reader holds (from a webhook, a stream) is then always found there.
  return readOnReplica(em, 'primary', (readEm) => feedPage(readEm, query, staff));
}

async function feedPage(
  em: EntityManager,
  query: z.output<typeof EventFeedQuery>,
  staff: CustomerScope['staff'],
): Promise<EventFeed> {
  const types = query.types
    ?.split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  if (query.after === 'now') {
    const [row] = await executeNamed<{ seq: string }>(em, FEED_END.bind({}));
    return { items: [], next_after: row?.seq ?? '0' };
  }
  let point = 0n;
  if (query.after !== undefined && query.after !== '0') {
    let seq: string | undefined;
    if (/^[0-9]{1,18}$/.test(query.after)) seq = query.after;
    else if (UUID.test(query.after))
      seq = (await executeNamed<{ seq: string }>(em, EVENT_SEQ_BY_ID.bind({ id: query.after })))[0]?.seq;
    else throw fieldError('query', ['after'], 'Expected an event id (its sequence number or uuid) or now');
    if (seq === undefined) throw cursorExpired();
    const resumed = await resumePoint(em, BigInt(seq), FEED_RETENTION_SECONDS);
    if (resumed === undefined) throw cursorExpired();
    point = resumed;
  }
  const pages = replayAfter(em, point, { types, windowSeconds: FEED_RETENTION_SECONDS, pageSize: query.limit, staff });
  const first = await pages.next();
  await pages.return(undefined);
  const events = first.done ? [] : first.value;
  return {
    items: events.map(wireEvent),
    next_after: events.length ? events[events.length - 1]!.seq : (query.after ?? '0'),
  };
}
