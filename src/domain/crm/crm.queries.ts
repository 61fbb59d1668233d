import { namedStatement } from '../../platform/named-sql';
import { eventInsertSql } from '../events/outbox';

/**
 * The end of day's dormancy step for one account's customer: an `active` customer none of
 * whose accounts closed a trade within `dormant_after_days` (a broker setting) before the
 * rollover becomes `dormant`, with its `customer.lifecycle_changed` event, in one statement.
 * The update is conditional on the stage, so the accounts of one customer in chunks running
 * at once change it, and write the event, once.
 */
export const MARK_DORMANT = namedStatement<{ customer_id: string; cutoff_at: Date }>(
  `with c as (
  update customers c set lifecycle = 'dormant', updated_at = now()
   where c.id = :customer_id::uuid and c.lifecycle = 'active'
     and not exists (
       select 1 from orders o join accounts a on a.id = o.account_id
        where a.customer_id = c.id and o.status = 'closed'
          and o.closed_at > :cutoff_at::timestamptz
                            - make_interval(days => coalesce((select dormant_after_days from broker_settings where id = 1), 90)))
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
