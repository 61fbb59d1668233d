import { z } from 'zod';
import { COMMISSION_TYPES, Group } from '../../entities/group.entity';
import { decText, num } from '../../platform/decimal';
import { withPlaces } from '../../platform/decimal-places';
import { namedStatement, type Statement } from '../../platform/named-sql';
import { auditInsertSql, auditParams, type AuditParams, type auditFields } from '../audit/audit';
import { COMMISSION_VALUE_MAX } from '../../platform/bounds';
import { CurrencyCode } from '../../platform/money-text';

/**
 * A group's terms, each written once: its name (which is also its column in
 * trading_groups), its bounds, what creation does without it, and the entity property it
 * is kept in. The creation and PATCH schemas, the response schema, the view, applying a
 * patch and the INSERT are all derived from this table; nothing else lists the fields.
 *
 * - `plain` terms are stored as they travel; the schema's values must fit the property.
 * - `decimal` terms are JSON numbers on the wire and decimal text in a numeric column.
 * - On creation a term is `required`, `optional` (absent, it keeps the entity's default),
 *   has a `{ default }` (the spec's Group table), or is `patch only`: not accepted on
 *   creation (an unknown field, ignored) but settable by PATCH.
 */
type OnCreate<S extends z.ZodType> = 'required' | 'optional' | 'patch only' | { default: z.output<S> };

type NullIn<T> = null extends T ? null : never;
type Property = keyof Group & string;
/** Properties kept as decimal text (numeric columns). */
type DecimalProperty = { [K in Property]: NonNullable<Group[K]> extends string ? K : never }[Property];

function plain<P extends Property, S extends z.ZodType<Group[P]>, C extends OnCreate<S>>(property: P, schema: S, create: C) {
  return { property, schema, create, decimal: false as const };
}

function decimal<P extends DecimalProperty & Property, S extends z.ZodType<number | NullIn<Group[P]>>, C extends OnCreate<S>>(
  property: P,
  schema: S,
  create: C,
) {
  return { property, schema, create, decimal: true as const };
}

/** A group's terms with their bounds and defaults (docs/trading-and-money.md), in the order the answer lists them. */
export const GROUP_TERMS = {
  name: plain('name', z.string().min(1).max(64), 'required'),
  description: plain('description', z.string().max(10_000).nullable(), 'optional'),
  currency: plain('currency', CurrencyCode, { default: 'USD' }),
  default_leverage: plain('defaultLeverage', z.int().min(1).max(1000), { default: 100 }),
  margin_call_level: decimal('marginCallLevel', withPlaces(z.number().min(20).max(500), 4), { default: 100 }),
  stopout_level: decimal('stopoutLevel', withPlaces(z.number().min(5).max(80), 4), { default: 20 }),
  commission_type: plain('commissionType', z.enum(COMMISSION_TYPES), { default: 'none' }),
  commission_value: decimal('commissionValue', withPlaces(z.number().min(0).max(COMMISSION_VALUE_MAX), 4), { default: 0 }),
  swap_enabled: plain('swapEnabled', z.boolean(), { default: true }),
  swap_multiplier: decimal('swapMultiplier', withPlaces(z.number().min(0.01).max(10), 4), { default: 1 }),
  swap_free: plain('swapFree', z.boolean(), { default: false }),
  swap_free_days: plain('swapFreeDays', z.int().min(0).max(365), { default: 0 }),
  is_islamic: plain('isIslamic', z.boolean(), { default: false }),
  max_exposure: decimal('maxExposure', withPlaces(z.number().min(0).max(1e15), 2).nullable(), 'optional'),
  net_max_exposure: plain('netMaxExposure', z.boolean(), { default: false }),
  max_open_positions: plain('maxOpenPositions', z.int().min(0).max(100_000).nullable(), 'patch only'),
  is_default: plain(
    'isDefault',
    z.boolean().describe('At most one group is the default; making one clears the others'),
    'patch only',
  ),
  is_active: plain('isActive', z.boolean().describe('A clone starts inactive; PATCH activates or retires a group'), 'patch only'),
};

type Terms = typeof GROUP_TERMS;
type TermName = keyof Terms;
/** A row of the table as the loops below read it; the table itself keeps every type precise. */
interface Term {
  property: Property;
  schema: z.ZodType;
  create: OnCreate<z.ZodType>;
  decimal: boolean;
}
const TERMS = Object.entries(GROUP_TERMS) as Array<[TermName, Term]>;

type CreationShape = {
  [K in TermName as Terms[K]['create'] extends 'patch only' ? never : K]: Terms[K]['create'] extends 'required'
    ? Terms[K]['schema']
    : Terms[K]['create'] extends 'optional'
      ? z.ZodOptional<Terms[K]['schema']>
      : z.ZodDefault<Terms[K]['schema']>;
};
type PatchShape = { [K in TermName]: z.ZodOptional<Terms[K]['schema']> };
type ResponseShape = { [K in TermName]: Terms[K]['schema'] };

function shape<T>(build: (term: Term) => z.ZodType | undefined): T {
  const fields: Record<string, z.ZodType> = {};
  for (const [name, term] of TERMS) {
    const field = build(term);
    if (field) fields[name] = field;
  }
  return fields as T;
}

/** POST /groups: omitted fields take the Group table's defaults; unknown fields (is_default among them) are dropped. */
export const GroupCreateSchema = z.object(
  shape<CreationShape>((t) => {
    if (t.create === 'patch only') return undefined;
    if (t.create === 'required') return t.schema;
    if (t.create === 'optional') return t.schema.optional();
    return t.schema.default(t.create.default);
  }),
);

/** PATCH /groups/{id}: only the fields sent change, with the same bounds; null clears what may be null. */
export const GroupPatchSchema = z.object(shape<PatchShape>((t) => t.schema.optional()));

/** The spec's Group (response): every term, always present. */
export const GroupSchema = z.object({
  id: z.uuid(),
  ...shape<ResponseShape>((t) => t.schema),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});

export type GroupTerms = z.output<typeof GroupCreateSchema>;

/** The Group table's defaults: what creation gives every term with one. */
export const GROUP_DEFAULTS = Object.fromEntries(
  TERMS.flatMap(([name, t]) => (typeof t.create === 'object' ? [[name, t.create.default]] : [])),
) as { [K in TermName as Terms[K]['create'] extends { default: unknown } ? K : never]: z.output<Terms[K]['schema']> };
export type GroupPatch = z.output<typeof GroupPatchSchema>;
export type GroupView = z.output<typeof GroupSchema>;

/** What a term's property holds, as the API shows it. */
function wireValue(g: Group, term: Term): unknown {
  const stored = g[term.property];
  return term.decimal ? num(stored as string | null | undefined) : (stored ?? null);
}

/** Every key of the answer, in order: views start as a copy of it, so all share one object shape. */
const VIEW_KEYS = Object.fromEntries(['id', ...TERMS.map(([name]) => name), 'created_at', 'updated_at'].map((k) => [k, null]));

export function groupView(g: Group): GroupView {
  const view: Record<string, unknown> = { ...VIEW_KEYS };
  view.id = g.id;
  for (const [name, term] of TERMS) view[name] = wireValue(g, term);
  view.created_at = g.createdAt.toISOString();
  view.updated_at = g.updatedAt.toISOString();
  // Built from the table the schema is built from: GroupSchema's shape by construction.
  return view as GroupView;
}

/** Writes the terms present in `patch` onto the entity; absent ones are left alone. */
export function applyGroupTerms(g: Group, patch: GroupPatch): void {
  const target = g as unknown as Record<string, unknown>;
  for (const [name, term] of TERMS) {
    const value = patch[name];
    if (value === undefined) continue;
    target[term.property] = term.decimal && value !== null ? decText(value as number) : value;
  }
}

/** The terms of a group as a patch, every one present: what a clone starts from. */
export function termsOf(view: GroupView): Required<GroupPatch> {
  const { id: _id, created_at: _created, updated_at: _updated, ...terms } = view;
  return terms;
}

/**
 * The trading_groups row of a group, by column: id and times, then every term as its
 * column holds it (decimal text for numeric columns).
 */
export type GroupRow = { id: string; created_at: Date; updated_at: Date } & Record<TermName, unknown>;

export function groupRow(g: Group): GroupRow {
  const row: Record<string, unknown> = { id: g.id, created_at: g.createdAt, updated_at: g.updatedAt };
  for (const [name, term] of TERMS) row[name] = g[term.property] ?? null;
  return row as GroupRow;
}

const COLUMNS = ['id', 'created_at', 'updated_at', ...TERMS.map(([name]) => name)];
const INSERT_GROUP = `insert into trading_groups (${COLUMNS.join(', ')})
  values (${COLUMNS.map((c) => `:${c}`).join(', ')})`;

const insertGroup = namedStatement<GroupRow>(INSERT_GROUP);

/** The group row alone (what the bench's bare baseline writes). */
export function insertGroupStatement(row: GroupRow): Statement {
  return insertGroup.bind(row);
}

/**
 * The group and its audit row in one statement (a data-modifying CTE: atomic, one round
 * trip). The audit row takes its times from the group row.
 */
const insertGroupWithAudit = namedStatement<GroupRow & AuditParams>(`
with g as (
  ${INSERT_GROUP}
  returning id, created_at
)
${auditInsertSql('g.created_at', 'g')}`);

export function insertGroupWithAuditStatement(group: Group, auditId: string, audit: ReturnType<typeof auditFields>): Statement {
  // The row is this call's own: the audit parameters join it rather than a copy of it.
  const params = Object.assign(groupRow(group), auditParams(auditId, audit));
  return insertGroupWithAudit.bind(params);
}
