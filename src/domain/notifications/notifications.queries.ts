import { namedStatement } from '../../platform/named-sql';

/**
 * A batch of notifications in one statement, from a JSON array of rows. The unique event id
 * makes a redelivered event a no-op; the ids answered are the ones written now, whose mail
 * may then be queued.
 */
export const INSERT_NOTIFICATIONS = namedStatement<{ rows: string }>(
  `insert into notifications (id, created_at, updated_at, customer_id, event_id, type, title, body, data)
   select gen_random_uuid(), r.created_at, now(), r.customer_id, r.event_id, r.type, r.title, r.body, r.data
     from jsonb_to_recordset(:rows::jsonb)
       as r(created_at timestamptz, customer_id uuid, event_id uuid, type text, title text, body text, data jsonb)
   on conflict (event_id) do nothing returning event_id`,
);
