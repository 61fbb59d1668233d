import { namedStatement } from '../../platform/named-sql';

/**
 * The outbox relay's and the consumers' inbox statements, with named parameters. Lists
 * travel as one JSON parameter each, so a batch is one statement whatever its size.
 */

/** The columns toOutboxEvent reads, of `domain_events e`. */
const EVENT_COLUMNS = 'e.id, e.seq, e.type, e.aggregate_type, e.aggregate_id, e.customer_id, e.data, e.created_at';

/** A transaction-level advisory lock: one relay batch at a time. */
export const TRY_XACT_LOCK = namedStatement<{ key: number }>('select pg_try_advisory_xact_lock(:key) as locked');

/** The same lock, waited for. */
export const XACT_LOCK = namedStatement<{ key: number }>('select pg_advisory_xact_lock(:key)');

/**
 * The next batch, each event numbered in publication order. The numbers are drawn in write
 * order within the batch, and batches are claimed one at a time under the relay's lock, so
 * publication numbers only grow (a rolled-back batch leaves a gap, never a repeat).
 */
export const CLAIM_UNPUBLISHED = namedStatement<{ limit: number }>(
  `select c.*, nextval('domain_event_publication_seq')::text as publication_seq
     from (select ${EVENT_COLUMNS} from domain_events e where e.published_at is null
            order by e.seq limit :limit for update skip locked) c`,
);

/** The inbox rows and the published mark in one statement; answers the rows written per consumer. */
export const HAND_TO_CONSUMERS = namedStatement<{ entries: string; published: string }>(
  `with inbox as (
     insert into event_inbox (event_id, consumer, event_seq, created_at)
     select event_id, consumer, event_seq, now() from jsonb_to_recordset(:entries::jsonb) as t(event_id uuid, consumer text, event_seq bigint)
     on conflict do nothing
     returning consumer
   ), published as (
     update domain_events d set published_at = now(), updated_at = now(), publication_seq = p.publication_seq
       from jsonb_to_recordset(:published::jsonb) as p(id uuid, publication_seq bigint)
      where d.id = p.id and d.published_at is null
   )
   select consumer, count(*)::int as n from inbox group by consumer`,
);

/** Seconds the oldest unpublished event has waited. */
export const RELAY_LAG = namedStatement<Record<string, never>>(
  'select extract(epoch from now() - created_at) as lag from domain_events where published_at is null order by seq limit 1',
);

export const CLAIM_INBOX = namedStatement<{ consumer: string; limit: number }>(
  `select ${EVENT_COLUMNS} from event_inbox i join domain_events e on e.id = i.event_id
    where i.consumer = :consumer and i.processed_at is null
    order by i.event_seq limit :limit for update of i skip locked`,
);

export const MARK_INBOX_PROCESSED = namedStatement<{ consumer: string; event_ids: string }>(
  `update event_inbox set processed_at = now()
    where consumer = :consumer and event_id in (select value::uuid from jsonb_array_elements_text(:event_ids::jsonb))`,
);
