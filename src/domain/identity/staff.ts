import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Role } from '../../entities/role.entity';
import { DATA_SCOPES, StaffUser } from '../../entities/staff-user.entity';
import { errors, ValidationFailure } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import type { StaffCaller } from '../../platform/caller';
import { assertPasswordPolicy } from './password-policy';
import { hashPassword } from './passwords';
import { ADMIN_ROLE, PERMISSIONS, PermissionSchema, type Permission } from './permissions';
import { normalizeEmail, permissionsOf } from './principals';
import { flushUnique } from '../../db/flush-unique';
import { executeNamed } from '../../db/bound-statement';
import { ADVISORY_XACT_LOCK, TEAM_IDS_OF } from './identity.queries';
import { uuidArrayLiteral } from '../../platform/customer-scope';

export const RoleSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  permissions: z.array(PermissionSchema),
  built_in: z.boolean(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type RoleView = z.output<typeof RoleSchema>;

export function roleView(r: Role): RoleView {
  return {
    id: r.id,
    name: r.name,
    // Stored only through PermissionSchema (role creation, the admin role's upkeep).
    permissions: [...(r.permissions as Permission[])].sort(),
    built_in: r.builtIn,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

export const StaffUserSchema = z.object({
  id: z.uuid(),
  email: z.string(),
  full_name: z.string(),
  is_active: z.boolean(),
  totp_enabled: z.boolean(),
  role_ids: z.array(z.uuid()),
  data_scope: z
    .enum(DATA_SCOPES)
    .describe("Whose customers the user sees: those it manages (own), also its teams' (team), or all"),
  team_ids: z.array(z.uuid()).describe('The teams the user belongs to (set through team membership)'),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type StaffUserView = z.output<typeof StaffUserSchema>;

/** `teamIds`: the user's teams, read by the caller (teamIdsOf), one statement for a whole page. */
export function staffUserView(u: StaffUser, teamIds: readonly string[] = []): StaffUserView {
  return {
    id: u.id,
    email: u.email,
    full_name: u.fullName,
    is_active: u.isActive,
    totp_enabled: u.totpEnabled,
    role_ids: u.roles.isInitialized() ? u.roles.getItems().map((r) => r.id) : [],
    data_scope: u.dataScope,
    team_ids: [...teamIds],
    created_at: u.createdAt.toISOString(),
    updated_at: u.updatedAt.toISOString(),
  };
}

/**
 * No escalation through roles: a staff caller grants only permissions it holds itself (an
 * API token: its scopes, which never exceed its issuer's), whether in a role it writes or
 * to a user it creates.
 */
export function assertGrantable(actor: StaffCaller, permissions: Iterable<string>): void {
  const missing = [...new Set(permissions)].filter((p) => !actor.permissions.has(p)).sort();
  if (missing.length)
    throw errors.forbidden(`You can only grant permissions you hold yourself; you do not hold ${missing.join(', ')}`);
}

/**
 * No escalation through acting on people either: deactivating, reactivating or re-roling
 * another staff user (or revoking its credentials) needs every permission that user holds,
 * as granting them would. Else a holder of manage_users alone could lock every admin out.
 */
export async function assertMayActOn(em: EntityManager, actor: StaffCaller, userId: string): Promise<void> {
  const held = await permissionsOf(em, 'user', userId);
  const missing = held.filter((p) => !actor.permissions.has(p));
  if (missing.length)
    throw errors.forbidden(
      `You can only act on a staff user whose permissions you all hold; you do not hold ${missing.join(', ')}`,
    );
}

/**
 * The same rule for roles: renaming, re-permissioning or deleting a role needs every permission
 * it holds now, else a holder of manage_users alone could rework or remove a role it could
 * never have granted (and so what its holders may do).
 */
export function assertMayChangeRole(actor: StaffCaller, role: Pick<Role, 'permissions'>): void {
  const missing = role.permissions.filter((p) => !actor.permissions.has(p)).sort();
  if (missing.length)
    throw errors.forbidden(
      `You can only change or delete a role whose permissions you all hold; you do not hold ${missing.join(', ')}`,
    );
}

/** Whether the caller holds the built-in admin role. An API token never counts as an admin. */
export async function isAdmin(em: EntityManager, actor: StaffCaller): Promise<boolean> {
  if (actor.kind !== 'user') return false;
  return (await em.count(StaffUser, { id: actor.userId, isActive: true, roles: { builtIn: true } })) > 0;
}

export async function createRole(em: EntityManager, actor: StaffCaller, input: { name: string; permissions: string[] }) {
  assertGrantable(actor, input.permissions);
  const role = em.create(Role, { name: input.name, permissions: [...new Set(input.permissions)].sort() });
  recordAudit(em, actor, { action: 'role.created', entityType: 'role', entityId: role.id, after: roleView(role) });
  await flushUnique(em, () =>
    errors.conflict('NAME_TAKEN', `A role named "${input.name}" exists (names are compared ignoring case)`),
  );
  return role;
}

export async function createStaffUser(
  em: EntityManager,
  actor: StaffCaller | 'system',
  input: { email: string; password: string; full_name: string; role_ids: string[] },
) {
  assertPasswordPolicy(input.password, { email: input.email, names: [input.full_name] });
  const roles = input.role_ids.length ? await em.find(Role, { id: { $in: input.role_ids } }) : [];
  const unknown = input.role_ids.map((id, i) => [id, i] as const).filter(([id]) => !roles.some((r) => r.id === id));
  if (unknown.length) {
    throw new ValidationFailure(
      unknown.map(([, i]) => ({ loc: ['body', 'role_ids', i], msg: 'No such role', type: 'value_error' })),
    );
  }
  if (actor !== 'system') {
    if (roles.some((r) => r.builtIn) && !(await isAdmin(em, actor)))
      throw errors.forbidden(`Only an ${ADMIN_ROLE} may assign the built-in ${ADMIN_ROLE} role`);
    assertGrantable(
      actor,
      roles.flatMap((r) => r.permissions),
    );
  }
  const user = em.create(StaffUser, {
    email: normalizeEmail(input.email),
    passwordHash: await hashPassword(input.password),
    fullName: input.full_name,
  });
  user.roles.set(roles);
  recordAudit(em, actor, {
    action: 'staff_user.created',
    entityType: 'staff_user',
    entityId: user.id,
    after: staffUserView(user),
  });
  await flushUnique(em, () => errors.conflict('EMAIL_TAKEN', 'A staff user with this email exists'));
  return user;
}

/** The first admin a development start creates when none is configured: its password is shown once. */
export const GENERATED_ADMIN_EMAIL = 'admin@trading.localhost';

/**
 * At start-up: the built-in `admin` role holds every permission (new permissions are added
 * to it), and if no staff user exists yet, the bootstrap admin of the configuration is
 * created; without one, and outside production, an admin with a generated password, which
 * is returned (once, to be shown to the person starting the service, never logged).
 * Serialised by an advisory lock, so several processes starting at once do it once.
 */
/** Any fixed key: first-run bootstraps of several processes at once make one administrator. */
const BOOTSTRAP_LOCK = 7406611212;

export async function bootstrapStaff(
  em: EntityManager,
  configured: { email: string; password: string } | undefined,
  options: { generateWhenMissing: boolean } = { generateWhenMissing: false },
): Promise<{ email: string; password: string } | undefined> {
  return em.transactional(async (tx) => {
    await executeNamed(tx, ADVISORY_XACT_LOCK.bind({ key: BOOTSTRAP_LOCK }));
    let role = await tx.findOne(Role, { name: ADMIN_ROLE });
    if (!role) role = tx.create(Role, { name: ADMIN_ROLE, permissions: [...PERMISSIONS], builtIn: true });
    else role.permissions = [...new Set([...role.permissions, ...PERMISSIONS])].sort();
    if ((await tx.count(StaffUser, {})) > 0) return undefined;
    const generated =
      !configured && options.generateWhenMissing
        ? { email: GENERATED_ADMIN_EMAIL, password: randomBytes(18).toString('base64url') }
        : undefined;
    const admin = configured ?? generated;
    if (admin) {
      const user = tx.create(StaffUser, {
        email: normalizeEmail(admin.email),
        passwordHash: await hashPassword(admin.password),
        fullName: 'Administrator',
      });
      user.roles.add(role);
      recordAudit(tx, 'system', {
        action: 'staff_user.bootstrapped',
        entityType: 'staff_user',
        entityId: user.id,
        after: { email: user.email, generated: Boolean(generated) },
      });
    }
    return generated;
  });
}

/** The teams of each user, in one statement: user id to team ids (a user of no team is absent). */
export async function teamIdsOf(em: EntityManager, userIds: readonly string[]): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  if (userIds.length === 0) return found;
  const rows = await executeNamed<{ user_id: string; team_ids: string[] }>(
    em,
    TEAM_IDS_OF.bind({ user_ids: uuidArrayLiteral(userIds) }),
  );
  for (const r of rows) found.set(r.user_id, r.team_ids);
  return found;
}

/** staffUserView for one user, its teams read. */
export async function staffUserViewOf(em: EntityManager, u: StaffUser): Promise<StaffUserView> {
  return staffUserView(u, (await teamIdsOf(em, [u.id])).get(u.id) ?? []);
}
