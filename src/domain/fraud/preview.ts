import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { executeBound } from '../../db/bound-statement';
import { FraudRuleInputSchema, type FraudRuleInput } from './rules';

export const FraudPreviewSchema = z.object({
  rule: FraudRuleInputSchema.describe('The rule to try, as it would be created (`enabled` and `position` are ignored)'),
  days: z.int().min(1).max(90).default(30).describe('How far back to replay, 1 to 90 days'),
});

export const FraudPreviewResultSchema = z.object({
  evaluations: z.int().describe('Stored evaluations of the event in the window'),
  would_allow: z.int(),
  would_review: z.int(),
  would_block: z.int(),
  missing_fields: z.int().describe('Evaluations that lacked at least one field the rule reads (such a field never matches)'),
  missing_by_field: z.record(z.string(), z.int()).describe('The same, per field'),
  examples: z.array(z.uuid()).max(5).describe('Up to 5 customers the rule would have matched'),
});

/**
 * A field's value at a stored evaluation, as SQL text: what the evaluation recorded when an
 * enabled rule read it, else what its raw signals give for the fields that are signals; null
 * (never matching) otherwise.
 */
function valueSql(field: string): { sql: string; values: unknown[] } {
  const signal: Record<string, string> = {
    'customer.id': `signals->>'customerId'`,
    'device.id': `signals->>'deviceId'`,
    'ip.address': `signals->>'ip'`,
    'ip.country': `signals->>'ipCountry'`,
    amount_usd: `case when signals->>'currency' = 'USD' then abs((signals->>'amount')::numeric)::text end`,
  };
  const fromSignals = signal[field];
  return {
    sql: fromSignals ? `coalesce(fields->>?, ${fromSignals})` : `(fields->>?)`,
    values: [field],
  };
}

const NUMERIC = `'^-?[0-9]+(\\.[0-9]+)?$'`;

function conditionSql(c: FraudRuleInput['conditions'][number]): { sql: string; values: unknown[] } {
  const v = valueSql(c.field);
  switch (c.op) {
    case 'eq':
      return { sql: `coalesce(lower(${v.sql}) = lower(?), false)`, values: [...v.values, String(c.value)] };
    case 'neq':
      return { sql: `coalesce(lower(${v.sql}) <> lower(?), false)`, values: [...v.values, String(c.value)] };
    case 'in':
      return {
        sql: `coalesce(lower(${v.sql}) = any(?::text[]), false)`,
        values: [...v.values, (c.value as Array<string | number>).map((x) => String(x).toLowerCase())],
      };
    default: {
      const op = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[c.op];
      return {
        sql: `coalesce(case when ${v.sql} ~ ${NUMERIC} then (${v.sql})::numeric ${op} ?::numeric end, false)`,
        values: [...v.values, ...v.values, c.value],
      };
    }
  }
}

/**
 * The one aggregate statement of a preview: the rule's conditions over the stored evaluations
 * of its event in the last `days` (what previewFraudRule runs; a benchmark runs it straight).
 */
export function previewStatement(input: z.output<typeof FraudPreviewSchema>): {
  sql: string;
  values: unknown[];
  fields: string[];
} {
  const { rule, days } = input;
  const parts = rule.conditions.map(conditionSql);
  const matched = `(${parts.map((p) => p.sql).join(rule.match === 'all' ? ' and ' : ' or ')})`;
  const fields = [...new Set(rule.conditions.map((c) => c.field))];
  const missing = fields.map(valueSql);
  const anyMissing = `(${missing.map((m) => `${m.sql} is null`).join(' or ')})`;
  const sql = `
    with e as (select customer_id, ${matched} as hit, ${anyMissing} as missing,
                      array[${missing.map((m) => `${m.sql} is null`).join(', ')}] as lacks
                 from fraud_evaluations where event = ? and created_at > now() - make_interval(days => ?))
    select count(*)::int as total,
           count(*) filter (where hit)::int as hits,
           count(*) filter (where missing)::int as missing,
           ${fields.map((_f, i) => `count(*) filter (where lacks[${i + 1}])::int as m${i}`).join(', ')},
           (select array_agg(customer_id) from (select distinct customer_id from e where hit and customer_id is not null limit 5) x) as examples
      from e`;
  const values = [
    ...parts.flatMap((p) => p.values),
    ...missing.flatMap((m) => m.values),
    ...missing.flatMap((m) => m.values),
    rule.event,
    days,
  ];
  return { sql, values, fields };
}

/**
 * Replays a rule over the stored evaluations of its event in the last `days`, in one aggregate
 * query, and writes nothing. The rule alone decides here: an evaluation it matches gets its
 * action, any other `allow`.
 */
export async function previewFraudRule(em: EntityManager, input: z.output<typeof FraudPreviewSchema>) {
  const { rule } = input;
  const { sql, values, fields } = previewStatement(input);
  const [row] = await executeBound<Record<string, unknown>>(em, { sql, values });
  const total = Number(row?.['total'] ?? 0);
  const hits = Number(row?.['hits'] ?? 0);
  return {
    evaluations: total,
    would_allow: rule.action === 'allow' ? total : total - hits,
    would_review: rule.action === 'review' ? hits : 0,
    would_block: rule.action === 'block' ? hits : 0,
    missing_fields: Number(row?.['missing'] ?? 0),
    missing_by_field: Object.fromEntries(fields.map((f, i) => [f, Number(row?.[`m${i}`] ?? 0)])),
    examples: ((row?.['examples'] as string[] | null) ?? []).slice(0, 5),
  };
}
