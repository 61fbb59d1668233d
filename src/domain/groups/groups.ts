import { randomUUID } from 'node:crypto';
import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Group } from '../../entities/group.entity';
import { GroupInstrument } from '../../entities/group-instrument.entity';
import { errors } from '../../platform/errors';
import { auditFields, recordAudit } from '../audit/audit';
import { recordEvent } from '../events/outbox';
import type { StaffCaller } from '../../platform/caller';
import { executeNamed } from '../../db/bound-statement';
import { cloneName } from './group-names';
import { COPY_GROUP_INSTRUMENTS, LOCK_DEFAULT_GROUP, NAMES_WITH_PREFIX } from './groups.queries';
import {
  applyGroupTerms,
  groupView,
  insertGroupWithAuditStatement,
  termsOf,
  type GroupPatch,
  type GroupTerms,
} from './group-terms';

function isNameClash(err: unknown): boolean {
  return (
    err instanceof UniqueConstraintViolationException && /trading_groups_name_ci_unique/.test(String((err as Error).message))
  );
}

const nameTaken = (name: string) =>
  errors.conflict('NAME_TAKEN', `A group named "${name}" exists (names are compared ignoring case)`);

/**
 * Creates a group and its audit row in one SQL statement (a data-modifying CTE: atomic,
 * one round trip), generated from the terms table. POST /groups stays on it because the
 * unit of work would take four statements (begin, two inserts, commit) on a route whose whole
 * cost is this write; the row is built by the same entity and view code as everywhere else.
 */
export async function createGroup(em: EntityManager, actor: StaffCaller, terms: GroupTerms): Promise<Group> {
  const group = new Group();
  applyGroupTerms(group, terms);
  const audit = auditFields(actor, { action: 'group.created', entityType: 'group', entityId: group.id, after: groupView(group) });
  const { sql, values } = insertGroupWithAuditStatement(group, randomUUID(), audit);
  try {
    await em.execute(sql, values);
  } catch (err) {
    if (isNameClash(err)) throw nameTaken(terms.name);
    throw err;
  }
  return group;
}

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
      // Requests making a group default take turns: without the lock, two making different
      // groups default at once would each clear only the flags already committed, so both
      // would stay default (and one waiting on the other's row could deadlock). The lock comes
      // before the row lock so it cannot deadlock with it, and the clearing UPDATE sees the
      // previous one's commit.
      if (patch.is_default === true) await executeNamed(tx, LOCK_DEFAULT_GROUP.bind({ key: DEFAULT_GROUP_LOCK }));
      const group = await tx.findOne(Group, id, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!group) throw errors.notFound('Group');
      const before = groupView(group);
      applyGroupTerms(group, patch);
      if (patch.is_default === true) await tx.nativeUpdate(Group, { id: { $ne: id }, isDefault: true }, { isDefault: false });
      group.updatedAt = new Date();
      recordAudit(tx, actor, { action: 'group.updated', entityType: 'group', entityId: id, before, after: groupView(group) });
      // About no customer: only webhooks without an affiliate_id receive it.
      recordEvent(tx, { type: 'group.updated', aggregateType: 'group', aggregateId: id, data: groupView(group) });
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
      (await executeNamed<{ name: string }>(tx, NAMES_WITH_PREFIX.bind({ pattern: `${likePrefix(source.name)}%` }))).map(
        (r) => r.name,
      ),
    );
    let n = 1;
    while (taken.has(cloneName(source.name, n).toLowerCase())) n++;

    const terms = termsOf(groupView(source));
    for (;;) {
      const name = cloneName(source.name, n);
      try {
        const clone = await tx.transactional(async (inner) => {
          const copy = inner.create(Group, { name } as Group);
          applyGroupTerms(copy, { ...terms, name, is_active: false, is_default: false });
          await inner.flush();
          await executeNamed(inner, COPY_GROUP_INSTRUMENTS.bind({ copy_id: copy.id, source_id: source.id }));
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
