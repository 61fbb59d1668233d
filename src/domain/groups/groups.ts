import { randomUUID } from 'node:crypto';
import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Group, type CommissionType } from '../../entities/group.entity';
import { GroupInstrument } from '../../entities/group-instrument.entity';
import { decText, num } from '../../platform/decimal';
import { errors } from '../../platform/errors';
import { auditFields, recordAudit } from '../audit/audit';
import type { StaffCaller } from '../identity/caller';
import { cloneName } from './group-names';

/** The creation body after validation and defaults (the Group table of the spec). */
export interface GroupTerms {
  name: string;
  description?: string | null | undefined;
  currency: string;
  default_leverage: number;
  margin_call_level: number;
  stopout_level: number;
  commission_type: CommissionType;
  commission_value: number;
  swap_enabled: boolean;
  swap_multiplier: number;
  swap_free: boolean;
  swap_free_days: number;
  is_islamic: boolean;
  max_exposure?: number | null | undefined;
  net_max_exposure: boolean;
}

export type GroupPatch = Partial<GroupTerms> & {
  is_active?: boolean | undefined;
  is_default?: boolean | undefined;
  max_open_positions?: number | null | undefined;
};

export function groupView(g: Group) {
  return {
    id: g.id,
    name: g.name,
    description: g.description ?? null,
    currency: g.currency,
    default_leverage: g.defaultLeverage,
    margin_call_level: num(g.marginCallLevel)!,
    stopout_level: num(g.stopoutLevel)!,
    commission_type: g.commissionType,
    commission_value: num(g.commissionValue)!,
    swap_enabled: g.swapEnabled,
    swap_multiplier: num(g.swapMultiplier)!,
    swap_free: g.swapFree,
    swap_free_days: g.swapFreeDays,
    is_islamic: g.isIslamic,
    max_exposure: num(g.maxExposure),
    net_max_exposure: g.netMaxExposure,
    max_open_positions: g.maxOpenPositions ?? null,
    is_default: g.isDefault,
    is_active: g.isActive,
    created_at: g.createdAt.toISOString(),
    updated_at: g.updatedAt.toISOString(),
  };
}

/** Writes the fields present in `terms` onto the entity; absent fields are left alone. */
function applyTerms(g: Group, terms: GroupPatch): void {
  if (terms.name !== undefined) g.name = terms.name;
  if (terms.description !== undefined) g.description = terms.description;
  if (terms.currency !== undefined) g.currency = terms.currency;
  if (terms.default_leverage !== undefined) g.defaultLeverage = terms.default_leverage;
  if (terms.margin_call_level !== undefined) g.marginCallLevel = decText(terms.margin_call_level);
  if (terms.stopout_level !== undefined) g.stopoutLevel = decText(terms.stopout_level);
  if (terms.commission_type !== undefined) g.commissionType = terms.commission_type;
  if (terms.commission_value !== undefined) g.commissionValue = decText(terms.commission_value);
  if (terms.swap_enabled !== undefined) g.swapEnabled = terms.swap_enabled;
  if (terms.swap_multiplier !== undefined) g.swapMultiplier = decText(terms.swap_multiplier);
  if (terms.swap_free !== undefined) g.swapFree = terms.swap_free;
  if (terms.swap_free_days !== undefined) g.swapFreeDays = terms.swap_free_days;
  if (terms.is_islamic !== undefined) g.isIslamic = terms.is_islamic;
  if (terms.max_exposure !== undefined) g.maxExposure = terms.max_exposure === null ? null : decText(terms.max_exposure);
  if (terms.net_max_exposure !== undefined) g.netMaxExposure = terms.net_max_exposure;
  if (terms.max_open_positions !== undefined) g.maxOpenPositions = terms.max_open_positions;
  if (terms.is_active !== undefined) g.isActive = terms.is_active;
  if (terms.is_default !== undefined) g.isDefault = terms.is_default;
}

function isNameClash(err: unknown): boolean {
  return (
    err instanceof UniqueConstraintViolationException && /trading_groups_name_ci_unique/.test(String((err as Error).message))
  );
}

const nameTaken = (name: string) =>
  errors.conflict('NAME_TAKEN', `A group named "${name}" exists (names are compared ignoring case)`);

/**
 * Creates a group and its audit row in one SQL statement (a data-modifying CTE: atomic,
 * one round trip). POST /groups is a hot path and the unit of work's flush cost more than
 * the rest of the request; the row is built by the same entity and view code as elsewhere.
 */
export async function createGroup(em: EntityManager, actor: StaffCaller, terms: GroupTerms): Promise<Group> {
  const group = new Group();
  group.name = terms.name;
  applyTerms(group, terms);
  const audit = auditFields(actor, { action: 'group.created', entityType: 'group', entityId: group.id, after: groupView(group) });
  try {
    await em.execute(INSERT_GROUP_WITH_AUDIT, [
      group.id,
      group.createdAt,
      group.updatedAt,
      group.name,
      group.description ?? null,
      group.currency,
      group.defaultLeverage,
      group.marginCallLevel,
      group.stopoutLevel,
      group.commissionType,
      group.commissionValue,
      group.swapEnabled,
      group.swapMultiplier,
      group.swapFree,
      group.swapFreeDays,
      group.isIslamic,
      group.maxExposure ?? null,
      group.netMaxExposure,
      group.maxOpenPositions ?? null,
      group.isDefault,
      group.isActive,
      randomUUID(),
      audit.actorType,
      audit.actorId,
      audit.apiTokenId,
      audit.action,
      audit.entityType,
      audit.entityId,
      JSON.stringify(audit.after),
      audit.requestId,
    ]);
  } catch (err) {
    if (isNameClash(err)) throw nameTaken(terms.name);
    throw err;
  }
  return group;
}

const INSERT_GROUP_WITH_AUDIT = `
with g as (
  insert into trading_groups (id, created_at, updated_at, name, description, currency, default_leverage, margin_call_level,
    stopout_level, commission_type, commission_value, swap_enabled, swap_multiplier, swap_free, swap_free_days, is_islamic,
    max_exposure, net_max_exposure, max_open_positions, is_default, is_active)
  values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  returning id, created_at
)
insert into audit_entries (id, created_at, updated_at, actor_type, actor_id, api_token_id, action, entity_type, entity_id, after, request_id)
select ?, g.created_at, g.created_at, ?, ?, ?, ?, ?, ?, ?::jsonb, ? from g`;

export async function findGroup(em: EntityManager, id: string): Promise<Group> {
  const group = await em.findOne(Group, id);
  if (!group) throw errors.notFound('Group');
  return group;
}

/** Any fixed key: the transaction-level advisory lock that serialises making a group the default. */
const DEFAULT_GROUP_LOCK = 0x67726f7570;

/** Only one group is the default: making one default clears the flag elsewhere in the same transaction. */
export async function updateGroup(em: EntityManager, actor: StaffCaller, id: string, patch: GroupPatch): Promise<Group> {
  try {
    return await em.transactional(async (tx) => {
      // Bug fix: two requests making different groups default at once each cleared only the
      // flags already committed, so both stayed default (and one waiting on the other's row
      // could deadlock into a 500). They now take turns; the lock comes before the row lock
      // so it cannot deadlock with it, and the clearing UPDATE sees the previous one's commit.
      if (patch.is_default === true) await tx.execute('select pg_advisory_xact_lock(?)', [DEFAULT_GROUP_LOCK]);
      const group = await tx.findOne(Group, id, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!group) throw errors.notFound('Group');
      const before = groupView(group);
      applyTerms(group, patch);
      if (patch.is_default === true) await tx.nativeUpdate(Group, { id: { $ne: id }, isDefault: true }, { isDefault: false });
      group.updatedAt = new Date();
      recordAudit(tx, actor, { action: 'group.updated', entityType: 'group', entityId: id, before, after: groupView(group) });
      return group;
    });
  } catch (err) {
    if (isNameClash(err)) throw nameTaken(patch.name ?? '');
    throw err;
  }
}

/**
 * Copies a group and its instrument rows in one transaction, inactive and not default,
 * named `<name> (copy)` or the next free `(copy n)`. The source row is locked, so clones
 * racing on one group take turns and each sees the names the others committed; the
 * unique index stays the last word, and a clash moves on to the next number.
 */
export async function cloneGroup(em: EntityManager, actor: StaffCaller, id: string): Promise<Group> {
  return em.transactional(async (tx) => {
    const source = await tx.findOne(Group, id, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!source) throw errors.notFound('Group');
    const taken = new Set(
      (
        await tx.execute<Array<{ name: string }>>(
          "select lower(name) as name from trading_groups where lower(name) like lower(?) escape '\\'",
          [`${likePrefix(source.name)}%`],
        )
      ).map((r) => r.name),
    );
    let n = 1;
    while (taken.has(cloneName(source.name, n).toLowerCase())) n++;

    const view = groupView(source);
    for (;;) {
      const name = cloneName(source.name, n);
      try {
        const clone = await tx.transactional(async (inner) => {
          const copy = inner.create(Group, { name } as Group);
          applyTerms(copy, {
            ...termsOf(view),
            name,
            is_active: false,
            is_default: false,
            max_open_positions: source.maxOpenPositions ?? null,
          });
          await inner.flush();
          await inner.execute(
            `insert into group_instruments (group_id, instrument_id, enabled, spread, commission_value, swap_long, swap_short, created_at, updated_at)
             select ?, instrument_id, enabled, spread, commission_value, swap_long, swap_short, now(), now() from group_instruments where group_id = ?`,
            [copy.id, source.id],
          );
          return copy;
        });
        recordAudit(tx, actor, {
          action: 'group.cloned',
          entityType: 'group',
          entityId: clone.id,
          before: { source_id: source.id },
          after: groupView(clone),
        });
        return clone;
      } catch (err) {
        if (!isNameClash(err)) throw err;
        n++;
      }
    }
  });
}

function termsOf(view: ReturnType<typeof groupView>): GroupTerms {
  return {
    name: view.name,
    description: view.description,
    currency: view.currency,
    default_leverage: view.default_leverage,
    margin_call_level: view.margin_call_level,
    stopout_level: view.stopout_level,
    commission_type: view.commission_type,
    commission_value: view.commission_value,
    swap_enabled: view.swap_enabled,
    swap_multiplier: view.swap_multiplier,
    swap_free: view.swap_free,
    swap_free_days: view.swap_free_days,
    is_islamic: view.is_islamic,
    max_exposure: view.max_exposure,
    net_max_exposure: view.net_max_exposure,
  };
}

/** The first 64 - len(" (copy n)") characters, LIKE-escaped: every clone name starts with them. */
function likePrefix(name: string): string {
  return cloneName(name, 999_999)
    .replace(/ \(copy 999999\)$/, '')
    .replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Deletes a group no trading account uses; its instrument rows go with it. */
export async function deleteGroup(
  em: EntityManager,
  actor: StaffCaller,
  id: string,
  accountsUsing: (em: EntityManager, id: string) => Promise<number>,
): Promise<void> {
  await em.transactional(async (tx) => {
    const group = await tx.findOne(Group, id, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!group) throw errors.notFound('Group');
    const used = await accountsUsing(tx, id);
    if (used > 0) throw errors.conflict('GROUP_IN_USE', `${used} trading account(s) use this group`);
    const before = groupView(group);
    await tx.nativeDelete(GroupInstrument, { group: id });
    tx.remove(group);
    recordAudit(tx, actor, { action: 'group.deleted', entityType: 'group', entityId: id, before });
  });
}
