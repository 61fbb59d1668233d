import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { FraudList, FraudRule } from '../../entities/fraud.entity';
import { errors, fieldError } from '../../platform/errors';
import type { StaffCaller } from '../../platform/caller';
import { recordAudit } from '../audit/audit';
import { FIELD_NAMES, FIELDS_DESCRIPTION, FRAUD_EVENTS, type FieldValue } from './fields';
import { executeNamed } from '../../db/bound-statement';
import { BUMP_RULES_STAMP, LOCK_FRAUD_RULES } from './fraud.queries';

export const MAX_FRAUD_RULES = 100;

export const FRAUD_LISTS = [
  'blocked_ips',
  'blocked_cidrs',
  'blocked_devices',
  'blocked_countries',
  'allowed_ips',
  'blocked_email_domains',
  'verification_exceptions',
] as const;
export type FraudListName = (typeof FRAUD_LISTS)[number];

export const FraudListItemsSchema = z.object({
  items: z.array(z.string().trim().min(1).max(200)).max(10_000).describe('The whole list; replaces what was there'),
});

export const ConditionSchema = z.object({
  field: z.enum(FIELD_NAMES).describe(`One of: ${FIELDS_DESCRIPTION}`),
  op: z.enum(['eq', 'neq', 'in', 'gt', 'gte', 'lt', 'lte']),
  value: z
    .union([z.string().max(200), z.number(), z.boolean(), z.array(z.union([z.string().max(200), z.number()])).max(1000)])
    .describe('A list for `in`; a number for gt/gte/lt/lte'),
});
export type Condition = z.output<typeof ConditionSchema>;

const RuleFields = {
  name: z.string().trim().min(1).max(100),
  event: z.enum(FRAUD_EVENTS),
  match: z.enum(['all', 'any']),
  conditions: z.array(ConditionSchema).min(1).max(20),
  action: z.enum(['allow', 'review', 'block']),
  position: z.int().min(0).max(100_000),
  enabled: z.boolean(),
};

export const FraudRuleInputSchema = z.object(RuleFields).superRefine((rule, ctx) => {
  rule.conditions.forEach((c, i) => {
    const numeric = ['gt', 'gte', 'lt', 'lte'].includes(c.op);
    if (numeric && typeof c.value !== 'number')
      ctx.addIssue({ code: 'custom', path: ['conditions', i, 'value'], message: `${c.op} compares with a number` });
    if ((c.op === 'in') !== Array.isArray(c.value))
      ctx.addIssue({ code: 'custom', path: ['conditions', i, 'value'], message: 'A list goes with `in`, and only with `in`' });
  });
});
export type FraudRuleInput = z.output<typeof FraudRuleInputSchema>;

export const FraudRulePatchSchema = z.object({
  name: RuleFields.name.optional(),
  match: RuleFields.match.optional(),
  conditions: RuleFields.conditions.optional(),
  action: RuleFields.action.optional(),
  position: RuleFields.position.optional(),
  enabled: RuleFields.enabled.optional(),
});

export const FraudRuleSchema = z.object({
  id: z.uuid(),
  ...RuleFields,
  version: z.int().describe('Rises with every change; an evaluation records the version that decided it'),
  builtin: z.boolean().describe('Shipped with the service (disabled until staff enable it)'),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});

export function fraudRuleView(r: FraudRule): z.output<typeof FraudRuleSchema> {
  return {
    id: r.id,
    name: r.name,
    event: r.event as FraudRuleInput['event'],
    match: r.match as FraudRuleInput['match'],
    conditions: r.conditions as Condition[],
    action: r.action as FraudRuleInput['action'],
    position: r.position,
    enabled: r.enabled,
    version: r.version,
    builtin: r.builtinKey !== null && r.builtinKey !== undefined,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

/** A condition or a rule, compiled: whether it holds for the field values of one evaluation. */
export type FieldTest = (values: Readonly<Record<string, FieldValue | undefined>>) => boolean;

/**
 * One condition as a test, its value prepared once (lower case text, the set of an `in`, the
 * number of a comparison); a field that has no value never matches, whatever the operator.
 */
export function compileCondition(c: { field: string; op: string; value: unknown }): FieldTest {
  const { field } = c;
  const lower = (v: unknown) => String(v).toLowerCase();
  switch (c.op) {
    case 'eq': {
      const want = lower(c.value);
      return (values) => values[field] !== null && values[field] !== undefined && lower(values[field]) === want;
    }
    case 'neq': {
      const want = lower(c.value);
      return (values) => values[field] !== null && values[field] !== undefined && lower(values[field]) !== want;
    }
    case 'in': {
      const set = new Set(Array.isArray(c.value) ? c.value.map(lower) : []);
      return (values) => values[field] !== null && values[field] !== undefined && set.has(lower(values[field]));
    }
    default: {
      const b = Number(c.value);
      if (!Number.isFinite(b)) return () => false;
      const holds =
        c.op === 'gt'
          ? (a: number) => a > b
          : c.op === 'gte'
            ? (a: number) => a >= b
            : c.op === 'lt'
              ? (a: number) => a < b
              : (a: number) => a <= b;
      return (values) => {
        const v = values[field];
        if (v === null || v === undefined) return false;
        const a = Number(v);
        return Number.isFinite(a) && holds(a);
      };
    }
  }
}

/** A rule as one test: all of its conditions (`all`) or any of them (`any`). */
export function compileRule(rule: {
  match: string;
  conditions: Array<{ field: string; op: string; value: unknown }>;
}): FieldTest {
  const tests = rule.conditions.map(compileCondition);
  return rule.match === 'all' ? (values) => tests.every((t) => t(values)) : (values) => tests.some((t) => t(values));
}

export async function createFraudRule(em: EntityManager, actor: StaffCaller, input: FraudRuleInput): Promise<FraudRule> {
  return em.transactional(async (tx) => {
    // Serialises creations so two at once cannot pass the cap together.
    await executeNamed(tx, LOCK_FRAUD_RULES.bind({}));
    if ((await tx.count(FraudRule, {})) >= MAX_FRAUD_RULES)
      throw errors.conflict('FRAUD_RULE_LIMIT', `At most ${MAX_FRAUD_RULES} fraud rules can exist; delete one first`);
    const rule = tx.create(FraudRule, { ...input });
    await executeNamed(tx, BUMP_RULES_STAMP.bind({}));
    recordAudit(tx, actor, {
      action: 'fraud_rule.created',
      entityType: 'fraud_rule',
      entityId: rule.id,
      after: fraudRuleView(rule),
    });
    return rule;
  });
}

export async function updateFraudRule(
  em: EntityManager,
  actor: StaffCaller,
  id: string,
  patch: z.output<typeof FraudRulePatchSchema>,
): Promise<FraudRule> {
  return em.transactional(async (tx) => {
    const rule = await tx.findOne(FraudRule, id);
    if (!rule) throw errors.notFound('Fraud rule');
    const before = fraudRuleView(rule);
    const next = { ...before, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) };
    const checked = FraudRuleInputSchema.safeParse(next);
    if (!checked.success) {
      const issue = checked.error.issues[0]!;
      throw fieldError('body', issue.path as (string | number)[], issue.message);
    }
    Object.assign(rule, {
      name: checked.data.name,
      match: checked.data.match,
      conditions: checked.data.conditions,
      action: checked.data.action,
      position: checked.data.position,
      enabled: checked.data.enabled,
      version: rule.version + 1,
      updatedAt: new Date(),
    });
    await executeNamed(tx, BUMP_RULES_STAMP.bind({}));
    recordAudit(tx, actor, {
      action: 'fraud_rule.updated',
      entityType: 'fraud_rule',
      entityId: id,
      before,
      after: fraudRuleView(rule),
    });
    return rule;
  });
}

export async function deleteFraudRule(em: EntityManager, actor: StaffCaller, id: string): Promise<void> {
  await em.transactional(async (tx) => {
    const rule = await tx.findOne(FraudRule, id);
    if (!rule) throw errors.notFound('Fraud rule');
    recordAudit(tx, actor, { action: 'fraud_rule.deleted', entityType: 'fraud_rule', entityId: id, before: fraudRuleView(rule) });
    tx.remove(rule);
    await executeNamed(tx, BUMP_RULES_STAMP.bind({}));
  });
}

export async function readFraudList(em: EntityManager, name: FraudListName): Promise<{ items: string[] }> {
  const list = await em.findOne(FraudList, { name });
  return { items: list?.items ?? [] };
}

export async function replaceFraudList(
  em: EntityManager,
  actor: StaffCaller,
  name: FraudListName,
  items: string[],
): Promise<{ items: string[] }> {
  const normalised = [...new Set(items.map((i) => (name === 'blocked_devices' ? i : i.toLowerCase())))];
  if (name === 'blocked_cidrs')
    normalised.forEach((c, i) => {
      if (!parseCidr(c)) throw fieldError('body', ['items', i], 'Not a CIDR range (a.b.c.d/n or an IPv6 prefix)');
    });
  return em.transactional(async (tx) => {
    const list = await tx.findOne(FraudList, { name });
    const before = list?.items ?? [];
    if (list) {
      list.items = normalised;
      list.updatedAt = new Date();
    } else tx.create(FraudList, { name, items: normalised });
    await executeNamed(tx, BUMP_RULES_STAMP.bind({}));
    recordAudit(tx, actor, {
      action: 'fraud_list.replaced',
      entityType: 'fraud_list',
      entityId: null,
      before: { name, items: before },
      after: { name, items: normalised },
    });
    return { items: normalised };
  });
}

/** An address as bits (IPv4 32, IPv6 128), or null. */
export function ipBits(address: string): { v: 4 | 6; bits: bigint } | null {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(address)) {
    const parts = address.split('.').map(Number);
    if (parts.some((p) => p > 255)) return null;
    return { v: 4, bits: parts.reduce((acc, p) => (acc << 8n) | BigInt(p), 0n) };
  }
  if (!address.includes(':')) return null;
  const [head, tail] = address.split('::') as [string, string | undefined];
  if (address.split('::').length > 2) return null;
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = tail === undefined ? 0 : 8 - h.length - t.length;
  const groups = [...h, ...Array(Math.max(fill, 0)).fill('0'), ...t];
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return null;
  return { v: 6, bits: groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n) };
}

export function parseCidr(cidr: string): { v: 4 | 6; bits: bigint; prefix: number } | null {
  const [addr, len] = cidr.split('/');
  const parsed = addr ? ipBits(addr) : null;
  if (!parsed || len === undefined || !/^\d{1,3}$/.test(len)) return null;
  const prefix = Number(len);
  if (prefix > (parsed.v === 4 ? 32 : 128)) return null;
  return { ...parsed, prefix };
}

export function inCidr(address: string, cidr: string): boolean {
  const a = ipBits(address);
  const c = parseCidr(cidr);
  if (!a || !c || a.v !== c.v) return false;
  const width = BigInt(a.v === 4 ? 32 : 128);
  const shift = width - BigInt(c.prefix);
  return a.bits >> shift === c.bits >> shift;
}
