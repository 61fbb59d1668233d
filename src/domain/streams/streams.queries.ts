import { namedStatement } from '../../platform/named-sql';

/**
 * The statements of live streams: the replay of a reconnecting stream from the outbox, and
 * the window it may replay from. Lists travel as one JSON parameter.
 */

/**
 * Published events after `after` in write order, within the replay window, for one customer
 * (`customer_id`), some types (`types`, a JSON array) or all (either null). Only published
 * events: the live feed carries exactly those, so replay and live meet at the same set.
 */
export const REPLAY_AFTER = namedStatement<{
  after: string;
  window_seconds: number;
  customer_id: string | null;
  types: string | null;
  limit: number;
}>(
  `select e.seq, e.id, e.type, e.created_at, e.customer_id, e.data from domain_events e
    where e.seq > :after::bigint and e.published_at is not null
      and e.created_at >= now() - make_interval(secs => :window_seconds)
      and (:customer_id::uuid is null or e.customer_id = :customer_id::uuid)
      and (:types::jsonb is null or e.type in (select jsonb_array_elements_text(:types::jsonb)))
    order by e.seq limit :limit`,
);

/** The first event inside the replay window, and the newest event at all. */
export const REPLAY_WINDOW = namedStatement<{ window_seconds: number }>(
  `select (select min(seq) from domain_events where created_at >= now() - make_interval(secs => :window_seconds))::text as floor,
          (select max(seq) from domain_events)::text as top`,
);
