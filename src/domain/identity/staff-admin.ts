import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiToken } from '../../entities/api-token.entity';
import { Role } from '../../entities/role.entity';
import { Session } from '../../entities/session.entity';
import { StaffUser, type DataScopeName } from '../../entities/staff-user.entity';
import { errors, ValidationFailure } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import { apiTokenFacts } from './api-tokens';
import type { StaffCaller, StaffDataScope } from '../../platform/caller';
import type { Identity } from './identity';
import { ADMIN_ROLE } from './permissions';
import { permissionsOf } from './principals';
import { revokeSessions } from './sessions';
import { staffDataScope } from './staff-scope';
import { assertGrantable, assertMayActOn, assertMayChangeRole, isAdmin, roleView, staffUserView, teamIdsOf } from './staff';
import { flushUnique } from '../../db/flush-unique';
import { executeNamed } from '../../db/bound-statement';
import { ACTIVE_USER_MANAGERS, ADVISORY_XACT_LOCK } from './identity.queries';

/**
 * Changing staff users and roles. Every change is audited in its own
 * transaction and takes effect on the affected people's very next request:
 * - a change of permissions overwrites the cached entries of their live sessions and API
 *   tokens after it commits (AuthCache.replaceActive): no waiting for an entry to expire;
 * - deactivating a user writes tombstones for all its sessions and API tokens before the
 *   change commits, as any revocation does, then records the revocations.
 * Changes are serialised by one advisory lock, so the rule that some active user must keep
 * `manage_users` is checked against one change at a time (two admins demoting each other
 * at once cannot both succeed).
 */
const STAFF_ADMIN_LOCK = 7406611213;

async function lockStaffAdministration(tx: EntityManager): Promise<void> {
  await executeNamed(tx, ADVISORY_XACT_LOCK.bind({ key: STAFF_ADMIN_LOCK }));
}

/** Nobody can remove the last active holder of manage_users: the staff would be locked out of staff administration. */
async function assertUserManagerRemains(tx: EntityManager): Promise<void> {
  const [row] = await executeNamed<{ n: number }>(tx, ACTIVE_USER_MANAGERS.bind({}));
  if (!row || row.n === 0)
    throw errors.conflict('LAST_USER_MANAGER', 'The change would leave no active staff user who can manage users');
}

function assertNotBuiltIn(role: Role): void {
  if (role.builtIn) throw errors.conflict('ROLE_BUILT_IN', `The built-in ${ADMIN_ROLE} role cannot be changed or deleted`);
}

async function rolesById(tx: EntityManager, ids: string[]): Promise<Role[]> {
  const roles = ids.length ? await tx.find(Role, { id: { $in: ids } }) : [];
  const unknown = ids.map((id, i) => [id, i] as const).filter(([id]) => !roles.some((r) => r.id === id));
  if (unknown.length)
    throw new ValidationFailure(
      unknown.map(([, i]) => ({ loc: ['body', 'role_ids', i], msg: 'No such role', type: 'value_error' })),
    );
  return roles;
}

/**
 * Writes the current permissions and data scope of these users into the cache entries of their
 * live sessions and API tokens. Postgres is read after the change committed, so what is written
 * is what a fill would read from now on.
 */
export async function refreshLivePermissions(em: EntityManager, identity: Identity, userIds: string[]): Promise<void> {
  if (userIds.length === 0) return;
  const sessions = await em.find(
    Session,
    // Dashboard sessions read permissions from Postgres on each request; only API sessions are cached.
    { principalType: 'user', principalId: { $in: userIds }, kind: 'api', revokedAt: null, expiresAt: { $gt: new Date() } },
    { fields: ['id', 'principalId'] },
  );
  const tokens = await em.find(ApiToken, { issuedById: { $in: userIds }, revokedAt: null });
  const held = new Map<string, string[]>();
  const scopes = new Map<string, StaffDataScope>();
  for (const id of userIds) {
    held.set(id, await permissionsOf(em, 'user', id));
    scopes.set(id, await staffDataScope(em, id));
  }
  await identity.sessions.replaceActive(
    sessions.map((s) => ({
      id: s.id,
      facts: {
        principalId: s.principalId,
        principalType: 'user' as const,
        permissions: held.get(s.principalId)!,
        dataScope: scopes.get(s.principalId)!,
      },
    })),
  );
  await identity.apiTokens.replaceActive(
    tokens
      .filter((t) => !t.expiresAt || t.expiresAt.getTime() > Date.now())
      .map((t) => ({
        id: t.tokenHash,
        facts: apiTokenFacts(t, new Set(held.get(t.issuedById)), scopes.get(t.issuedById)!),
        maxTtlSeconds: t.expiresAt ? Math.floor((t.expiresAt.getTime() - Date.now()) / 1000) : undefined,
      })),
  );
}

export interface StaffUserPatch {
  full_name?: string | undefined;
  role_ids?: string[] | undefined;
  is_active?: boolean | undefined;
  data_scope?: DataScopeName | undefined;
}

export async function updateStaffUser(
  em: EntityManager,
  identity: Identity,
  actor: StaffCaller,
  userId: string,
  patch: StaffUserPatch,
): Promise<StaffUser> {
  const user = await em.transactional(async (tx) => {
    await lockStaffAdministration(tx);
    const found = await tx.findOne(StaffUser, userId, { populate: ['roles'], refresh: true });
    if (!found) throw errors.notFound('Staff user');
    // Read under the lock, before this change: what the user holds now is what the actor must hold.
    await assertMayActOn(tx, actor, found.id);
    const teamIds = (await teamIdsOf(tx, [found.id])).get(found.id) ?? [];
    const before = staffUserView(found, teamIds);
    if (patch.role_ids !== undefined) {
      const roles = await rolesById(tx, [...new Set(patch.role_ids)]);
      const current = found.roles.getItems();
      const added = roles.filter((r) => !current.includes(r));
      const removed = current.filter((r) => !roles.includes(r));
      if ([...added, ...removed].some((r) => r.builtIn) && !(await isAdmin(tx, actor)))
        throw errors.forbidden(`Only an ${ADMIN_ROLE} may assign or remove the built-in ${ADMIN_ROLE} role`);
      assertGrantable(
        actor,
        added.flatMap((r) => r.permissions),
      );
      found.roles.set(roles);
    }
    if (patch.full_name !== undefined) found.fullName = patch.full_name;
    // Cached with the user's sessions and tokens: refreshed below, once committed.
    if (patch.data_scope !== undefined) found.dataScope = patch.data_scope;
    const deactivating = patch.is_active === false && found.isActive;
    if (patch.is_active !== undefined) found.isActive = patch.is_active;
    await tx.flush();
    await assertUserManagerRemains(tx);
    // Only once every rule has passed: tombstones cannot be taken back if the change fails.
    if (deactivating) await revokeEverything(tx, identity, found.id);
    recordAudit(tx, actor, {
      action: 'staff_user.updated',
      entityType: 'staff_user',
      entityId: found.id,
      before,
      after: staffUserView(found, teamIds),
    });
    return found;
  });
  if ((patch.role_ids !== undefined || patch.data_scope !== undefined) && user.isActive)
    await refreshLivePermissions(em, identity, [user.id]);
  return user;
}

/** A deactivated user's sessions and API tokens stop working at once: tombstones first, then the rows. */
async function revokeEverything(tx: EntityManager, identity: Identity, userId: string): Promise<void> {
  const sessions = await tx.find(Session, { principalType: 'user', principalId: userId, revokedAt: null }, { fields: ['id'] });
  await revokeSessions(
    tx,
    identity,
    sessions.map((s) => s.id),
    'user_deactivated',
  );
  const tokens = await tx.find(ApiToken, { issuedById: userId, revokedAt: null });
  await identity.apiTokens.revoke(tokens.map((t) => t.tokenHash));
  for (const token of tokens) token.revokedAt = new Date();
}

export interface RolePatch {
  name?: string | undefined;
  permissions?: string[] | undefined;
}

export async function updateRole(
  em: EntityManager,
  identity: Identity,
  actor: StaffCaller,
  roleId: string,
  patch: RolePatch,
): Promise<Role> {
  const { role, holders } = await em.transactional(async (tx) => {
    await lockStaffAdministration(tx);
    const found = await tx.findOne(Role, roleId, { refresh: true });
    if (!found) throw errors.notFound('Role');
    assertNotBuiltIn(found);
    assertMayChangeRole(actor, found);
    const before = roleView(found);
    if (patch.permissions !== undefined) {
      const next = [...new Set(patch.permissions)].sort();
      // Taking a permission away is not an escalation; adding one is, unless the actor holds it.
      assertGrantable(
        actor,
        next.filter((p) => !found.permissions.includes(p)),
      );
      found.permissions = next;
    }
    if (patch.name !== undefined) found.name = patch.name;
    await flushUnique(tx, () =>
      errors.conflict('NAME_TAKEN', `A role named "${patch.name}" exists (names are compared ignoring case)`),
    );
    await assertUserManagerRemains(tx);
    recordAudit(tx, actor, { action: 'role.updated', entityType: 'role', entityId: found.id, before, after: roleView(found) });
    const users = await tx.find(StaffUser, { roles: found.id, isActive: true }, { fields: ['id'] });
    return { role: found, holders: users.map((u) => u.id) };
  });
  if (patch.permissions !== undefined) await refreshLivePermissions(em, identity, holders);
  return role;
}

export async function deleteRole(em: EntityManager, actor: StaffCaller, roleId: string): Promise<void> {
  await em.transactional(async (tx) => {
    await lockStaffAdministration(tx);
    const role = await tx.findOne(Role, roleId, { refresh: true });
    if (!role) throw errors.notFound('Role');
    assertNotBuiltIn(role);
    assertMayChangeRole(actor, role);
    const holders = await tx.count(StaffUser, { roles: role.id });
    if (holders > 0)
      throw errors.conflict(
        'ROLE_IN_USE',
        `The role is held by ${holders} staff user${holders === 1 ? '' : 's'}; take it from them first`,
      );
    recordAudit(tx, actor, { action: 'role.deleted', entityType: 'role', entityId: role.id, before: roleView(role) });
    tx.remove(role);
  });
}

/**
 * After a change of teams (membership, a lead, a parent) has committed: the cached scope of
 * every active `team`-scope user is written anew, since a lead sees its descendant teams and
 * one change of the tree can reach many leads. Teams change rarely; staff are few.
 */
export async function refreshTeamScopes(em: EntityManager, identity: Identity): Promise<void> {
  const users = await em.find(StaffUser, { dataScope: 'team', isActive: true }, { fields: ['id'] });
  await refreshLivePermissions(
    em,
    identity,
    users.map((u) => u.id),
  );
}
