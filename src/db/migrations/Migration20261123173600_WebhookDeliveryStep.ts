import { Migration } from '@mikro-orm/migrations';

/**
 * The deliverer's hot path as one statement. `webhook_delivery_step` records a
 * successful attempt (if given) and claims the webhook's next attempt in a single call, so a
 * delivery costs one round trip to Postgres instead of a transaction of five. Each statement
 * in a VOLATILE PL/pgSQL function takes a fresh snapshot, so the messages are read after the
 * webhook's row lock is held, as the claim's invariant needs (see domain/webhooks/delivery.ts).
 */
export class Migration20261123173600_WebhookDeliveryStep extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function webhook_delivery_step(
        p_webhook uuid, p_lease_ms int, p_new_id uuid, p_claim boolean,
        p_done uuid, p_attempt_id uuid, p_started timestamptz, p_duration int, p_status int, p_response text, p_clear_failing boolean)
      returns table (delivery_id uuid, endpoint_url text, secret_sealed text, failing boolean, attempts int, n int, body text)
      language plpgsql volatile as $fn$
      #variable_conflict use_column
      declare
        w record;
        d record;
        v_id uuid;
        v_attempts int;
        v_marked int;
      begin
        if p_done is not null then
          insert into webhook_attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
            select p_attempt_id, p_done, coalesce(max(a.attempt), 0) + 1, p_started, p_duration, p_status, null, p_response
              from webhook_attempts a where a.delivery_id = p_done;
          update webhook_deliveries set status = 'delivered', delivered_at = now(), lease_until = null, updated_at = now() where id = p_done;
          if p_clear_failing then
            update webhooks set failing_since = null where id = p_webhook;
          end if;
        end if;
        if not p_claim then
          return;
        end if;

        -- NO KEY UPDATE: the dispatcher's message inserts (foreign keys to this row) need not wait.
        select ww.endpoint_url, ww.secret_sealed, ww.batch_size_max, ww.is_active, ww.failing_since is not null as failing
          into w from webhooks ww where ww.id = p_webhook for no key update;
        if not found or not w.is_active then
          return;
        end if;
        select dd.id, dd.next_attempt_at <= now() as due, coalesce(dd.lease_until > now(), false) as leased,
               dd.lease_until is not null as abandoned
          into d from webhook_deliveries dd
         where dd.webhook_id = p_webhook and dd.status = 'pending' order by dd.first_event_seq, dd.created_at limit 1;
        if found then
          if d.leased or not d.due then
            return;
          end if;
          if d.abandoned then
            insert into webhook_attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
              select gen_random_uuid(), d.id, coalesce(max(a.attempt), 0) + 1, now(), 0, null,
                     'no outcome recorded: the worker stopped during the attempt', null
                from webhook_attempts a where a.delivery_id = d.id;
          end if;
          update webhook_deliveries dd set attempts = dd.attempts + 1, lease_until = now() + p_lease_ms * interval '1 millisecond',
                 updated_at = now() where dd.id = d.id returning dd.attempts into v_attempts;
          v_id := d.id;
        else
          with b as (
            select m.event_id, m.event_seq from webhook_messages m
             where m.webhook_id = p_webhook and m.delivery_id is null order by m.event_seq limit w.batch_size_max
          ), ins as (
            insert into webhook_deliveries (id, webhook_id, created_at, updated_at, status, event_count, first_event_seq, attempts, next_attempt_at, lease_until)
            select p_new_id, p_webhook, now(), now(), 'pending', count(*), min(b.event_seq), 1, now(), now() + p_lease_ms * interval '1 millisecond'
              from b having count(*) > 0
            returning id
          ), upd as (
            update webhook_messages m set delivery_id = ins.id from ins, b where m.webhook_id = p_webhook and m.event_id = b.event_id
            returning 1
          )
          select count(*) into v_marked from upd;
          if v_marked = 0 then
            return;
          end if;
          v_id := p_new_id;
          v_attempts := 1;
        end if;

        -- The body, built from the stored events in write order: {"events": [{id, type, created_at, data}]}.
        return query
          select v_id, w.endpoint_url::text, w.secret_sealed, w.failing, v_attempts, count(*)::int,
                 json_build_object('events', coalesce(json_agg(json_build_object(
                   'id', e.id, 'type', e.type,
                   'created_at', to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                   'data', e.data) order by m.event_seq), '[]'::json))::text
            from webhook_messages m join domain_events e on e.id = m.event_id where m.delivery_id = v_id;
      end
      $fn$;`);
  }

  override async down(): Promise<void> {
    this.addSql(
      'drop function if exists webhook_delivery_step(uuid, int, uuid, boolean, uuid, uuid, timestamptz, int, int, text, boolean);',
    );
  }
}
