import { namedStatement } from '../../platform/named-sql';
import { scopeSql } from '../../platform/customer-scope';

/**
 * The statements of live streams: the replay of a reconnecting stream from the outbox, and
 * the window it may replay from. Lists travel as one JSON parameter.
 */

/**
 * Published events after publication number `after`, in publication order (the order the
 * live feed carries them), within the replay window, for one customer (`customer_id`), some
 * types (`types`, a JSON array) or all (either null). Only published events: the live feed
 * carries exactly those, so replay and live meet at the same set.
 */
export const REPLAY_AFTER = namedStatement<{
  after: string;
  window_seconds: number;
  customer_id: string | null;
  types: string | null;
  limit: number;
}>(
  `select e.seq, e.publication_seq, e.id, e.type, e.created_at, e.customer_id, e.data from domain_events e
    where e.publication_seq > :after::bigint
      and e.created_at >= now() - make_interval(secs => :window_seconds)
      and ${scopeSql('e.customer_id')}
      and (:types::jsonb is null or e.type in (select jsonb_array_elements_text(:types::jsonb)))
    order by e.publication_seq limit :limit`,
);

/**
 * Where a stream that last saw event `seq` resumes: that event's publication number, when it
 * is still kept, was handed over, and lies inside the replay window.
 */
export const RESUME_POINT = namedStatement<{ seq: string; window_seconds: number }>(
  `select publication_seq::text as publication_seq from domain_events
    where seq = :seq::bigint and publication_seq is not null
      and created_at >= now() - make_interval(secs => :window_seconds)`,
);

/** The event handed over last: where a reader asking from `now` stands. */
export const FEED_END = namedStatement<Record<string, never>>(
  'select seq::text as seq from domain_events where publication_seq is not null order by publication_seq desc limit 1',
);

/** An event's write number from its uuid (the id webhooks carry). */
export const EVENT_SEQ_BY_ID = namedStatement<{ id: string }>('select seq::text as seq from domain_events where id = :id::uuid');
