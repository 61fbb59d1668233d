import { namedStatement } from '../../platform/named-sql';
import { eventInsertSql } from '../events/outbox';

/**
 * The fixed statements of a risk rule's apply run, with named parameters. The
 * classification itself is built by classify.ts, whose text depends on the rule. Each action
 * marks its column of risk_run_items in the statement that performs it, so a retried job
 * skips what is done.
 */

export const RUN_CLASSIFIED = namedStatement<{ run_id: string }>(
  'select exists (select 1 from risk_run_items where run_id = :run_id) as classified',
);

export const MOVE_CLASS_TO_GROUP = namedStatement<{ run_id: string; risk_class: string; group_id: string }>(
  `with m as (
     update risk_run_items set moved_to_group_id = :group_id::uuid
      where run_id = :run_id and risk_class = :risk_class and moved_to_group_id is null returning account_id)
   update accounts set group_id = :group_id::uuid, updated_at = now()
    where id in (select account_id from m) and group_id is distinct from :group_id::uuid`,
);

export const DISABLE_CLASS_TRADING = namedStatement<{ run_id: string; risk_class: string }>(
  `with m as (
     update risk_run_items set trading_disabled = true
      where run_id = :run_id and risk_class = :risk_class and not trading_disabled returning account_id)
   update accounts set trading_disabled = true, updated_at = now()
    where id in (select account_id from m) and not trading_disabled`,
);

/** The accounts of a class the run disabled: their waiting pending orders are cancelled next. */
export const CLASS_DISABLED_ACCOUNTS = namedStatement<{ run_id: string; risk_class: string }>(
  'select account_id from risk_run_items where run_id = :run_id and risk_class = :risk_class and trading_disabled',
);

export const RUN_CLASS_COUNTS = namedStatement<{ run_id: string }>(
  'select risk_class, count(*)::int as n from risk_run_items where run_id = :run_id group by risk_class',
);

/** Marks the class's accounts notified and writes an account.risk_classified event for each account it marked. */
export const NOTIFY_CLASS = namedStatement<{
  run_id: string;
  risk_class: string;
  rule_id: string | null;
  rule_name: string | null;
}>(
  `with m as (
     update risk_run_items set notified = true
      where run_id = :run_id and risk_class = :risk_class and not notified returning login, customer_id)
   ${eventInsertSql({
     type: 'account.risk_classified',
     aggregateType: 'account',
     aggregateId: 'm.login::text',
     customerId: 'm.customer_id',
     data: `json_build_object('login', m.login, 'risk_class', :risk_class::text, 'rule_id', :rule_id::uuid, 'rule_name', :rule_name::text, 'run_id', :run_id::uuid)`,
     at: 'now()',
     from: 'm',
   })}`,
);
