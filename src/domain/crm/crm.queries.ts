import { namedStatement } from '../../platform/named-sql';
import { eventInsertSql } from '../events/outbox';

/**
 * The end of day's dormancy step for the customers of a chunk's accounts (`customer_ids`, a
 * JSON array), in one statement: an `active` customer none of whose accounts closed a trade
 * within `dormant_after_days` (a broker setting) before the rollover becomes `dormant`, with
 * its `customer.lifecycle_changed` event. The customers turning dormant are locked in id order
 * first, so chunks running at once that share customers never deadlock; the update is
 * conditional on the stage, so they change a customer, and write the event, once.
 */
export const MARK_DORMANT = namedStatement<{ customer_ids: string; cutoff_at: Date }>(
  `with k as (
  select c.id from customers c
   where c.id in (select jsonb_array_elements_text(:customer_ids::jsonb)::uuid) and c.lifecycle = 'active'
     and not exists (
       select 1 from orders o join accounts a on a.id = o.account_id
        where a.customer_id = c.id and o.status = 'closed'
          and o.closed_at > :cutoff_at::timestamptz
                            - make_interval(days => coalesce((select dormant_after_days from broker_settings where id = 1), 90)))
   order by c.id
     for update
), c as (
  update customers c set lifecycle = 'dormant', updated_at = now()
    from k where c.id = k.id and c.lifecycle = 'active'
  returning c.id
), e as (
  ${eventInsertSql({
    type: 'customer.lifecycle_changed',
    aggregateType: 'customer',
    aggregateId: 'c.id::text',
    customerId: 'c.id',
    data: `json_build_object('customer_id', c.id, 'from', 'active', 'to', 'dormant')`,
    at: 'now()',
    from: 'c',
  })}
)
select count(*)::int as n from c`,
);
