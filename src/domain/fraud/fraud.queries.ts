import { namedStatement } from '../../platform/named-sql';

/** Serialises the creation of fraud rules, so two at once cannot both pass the cap. */
export const LOCK_FRAUD_RULES = namedStatement<Record<string, never>>(`select pg_advisory_xact_lock(hashtext('fraud_rules'))`);

/**
 * The stamp of the rules and lists as they stand (one row, one index read), and `columns`
 * (select-list expressions with `?` placeholders) read in the same statement, after `ctes`
 * (data-modifying CTEs, `name as (...)`, which run once whatever the select reads of them).
 */
export function readStampWith(columns: readonly string[], ctes: readonly string[] = []): string {
  const select = `select s.stamp::text as stamp${columns.map((c) => `, ${c}`).join('')} from fraud_rules_stamp s where s.id = 1`;
  if (ctes.length === 0) return select;
  return `with ${ctes.join(', ')} ${select}`;
}

/** A new stamp, in the transaction of a change of a rule or a list: every process's copy is stale once it commits. */
export const BUMP_RULES_STAMP = namedStatement<Record<string, never>>(
  `update fraud_rules_stamp set stamp = gen_random_uuid(), changed_at = now() where id = 1`,
);

/**
 * The stamp, the enabled rules of every event in evaluation order and the lists, in one
 * statement (one snapshot): a copy can never hold rules newer or older than its stamp.
 */
export const READ_RULES_AND_LISTS = namedStatement<Record<string, never>>(
  `select s.stamp::text as stamp,
          coalesce((select json_agg(json_build_object('id', r.id, 'version', r.version, 'event', r.event, 'match', r.match,
                      'conditions', r.conditions, 'action', r.action) order by r.event, r.position, r.created_at)
                      from fraud_rules r where r.enabled), '[]'::json) as rules,
          coalesce((select json_object_agg(l.name, l.items) from fraud_lists l), '{}'::json) as lists
     from fraud_rules_stamp s where s.id = 1`,
);

/** Attaches a sign-up's evaluation to the customer its confirmation created. */
export const ATTACH_EVALUATION = namedStatement<{ id: string; customer_id: string }>(
  `update fraud_evaluations set customer_id = :customer_id::uuid, updated_at = now() where id = :id::uuid and customer_id is null`,
);

/** A customer's accounts, locked by id (the order transfers lock two accounts in). */
export const LOCK_CUSTOMER_ACCOUNTS = namedStatement<{ customer_id: string }>(
  `select id from accounts where customer_id = :customer_id::uuid order by id for update`,
);
export const LOCK_CUSTOMER = namedStatement<{ customer_id: string }>(
  `select 1 from customers where id = :customer_id::uuid for update`,
);

export const STAFF_EMAIL = namedStatement<{ id: string }>(`select email from staff_users where id = :id::uuid`);

/**
 * The insert of stored evaluations, rows from `rows`: a select (or VALUES) of id, created_at,
 * event, customer_id, decision, decided_by, rule_id, rule_version, signals, fields,
 * reference_type and reference_id. The only place that names the columns, for the evaluation
 * below and for set-based loads.
 */
export function evaluationInsertSql(rows: string): string {
  return `insert into fraud_evaluations (id, created_at, updated_at, event, customer_id, decision, decided_by, rule_id,
     rule_version, signals, fields, reference_type, reference_id)
   select id, created_at, created_at, event, customer_id, decision, decided_by, rule_id, rule_version, signals, fields,
          reference_type, reference_id
     from (${rows}) as r(id, created_at, event, customer_id, decision, decided_by, rule_id, rule_version, signals, fields,
                         reference_type, reference_id)`;
}

/** What one stored evaluation holds, by name. */
export interface EvaluationParams {
  id: string;
  event: string;
  customer_id: string | null;
  decision: string;
  decided_by: string;
  rule_id: string | null;
  rule_version: number | null;
  signals: string;
  fields: string;
  reference_type: string | null;
  reference_id: string | null;
}

const EVALUATION_ROW = `:id::uuid, now(), :event::text, :customer_id::uuid, :decision::text, :decided_by::text, :rule_id::uuid,
             :rule_version::int, :signals::jsonb, :fields::jsonb, :reference_type::text, :reference_id::text`;

/** One evaluation, as evaluateFraudOn stores it. */
export const INSERT_EVALUATION = namedStatement<EvaluationParams>(evaluationInsertSql(`values (${EVALUATION_ROW})`));

/**
 * One evaluation decided before the statement that reads the stamp, as a CTE of that
 * statement (readStampWith, or a caller's own statement): written only when the stamp is still
 * `:stamp`, the one of the rules and lists that decided it. `fraud_evaluation` has a row when it
 * was written (EVALUATION_STORED).
 */
export const EVALUATION_AT_STAMP = namedStatement<EvaluationParams & { stamp: string }>(
  `fraud_evaluation as (${evaluationInsertSql(
    `select ${EVALUATION_ROW} from fraud_rules_stamp st where st.id = 1 and st.stamp::text = :stamp::text`,
  )} returning 1)`,
);

/** In a statement carrying EVALUATION_AT_STAMP: whether the evaluation was written. */
export const EVALUATION_STORED = 'exists (select 1 from fraud_evaluation)';
