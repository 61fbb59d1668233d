import type { EntityManager } from '@mikro-orm/postgresql';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { Role } from '../../entities/role.entity';
import { StaffUser } from '../../entities/staff-user.entity';
import { errors, ValidationFailure } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import type { StaffCaller } from './caller';
import { hashPassword } from './passwords';
import { ADMIN_ROLE, PERMISSIONS } from './permissions';
import { normalizeEmail } from './principals';

export function roleView(r: Role) {
  return {
    id: r.id,
    name: r.name,
    permissions: [...r.permissions].sort(),
    built_in: r.builtIn,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

export function staffUserView(u: StaffUser) {
  return {
    id: u.id,
    email: u.email,
    full_name: u.fullName,
    is_active: u.isActive,
    totp_enabled: u.totpEnabled,
    role_ids: u.roles.isInitialized() ? u.roles.getItems().map((r) => r.id) : [],
    created_at: u.createdAt.toISOString(),
    updated_at: u.updatedAt.toISOString(),
  };
}

export async function createRole(em: EntityManager, actor: StaffCaller, input: { name: string; permissions: string[] }) {
  const role = em.create(Role, { name: input.name, permissions: [...new Set(input.permissions)].sort() });
  recordAudit(em, actor, { action: 'role.created', entityType: 'role', entityId: role.id, after: roleView(role) });
  try {
    await em.flush();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException)
      throw errors.conflict('NAME_TAKEN', `A role named "${input.name}" exists`);
    throw err;
  }
  return role;
}

export async function createStaffUser(
  em: EntityManager,
  actor: StaffCaller | 'system',
  input: { email: string; password: string; full_name: string; role_ids: string[] },
) {
  const roles = input.role_ids.length ? await em.find(Role, { id: { $in: input.role_ids } }) : [];
  const unknown = input.role_ids.map((id, i) => [id, i] as const).filter(([id]) => !roles.some((r) => r.id === id));
  if (unknown.length) {
    throw new ValidationFailure(
      unknown.map(([, i]) => ({ loc: ['body', 'role_ids', i], msg: 'No such role', type: 'value_error' })),
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
  try {
    await em.flush();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException)
      throw errors.conflict('EMAIL_TAKEN', 'A staff user with this email exists');
    throw err;
  }
  return user;
}

/**
 * At start-up: the built-in `admin` role holds every permission (new permissions are added
 * to it), and if no staff user exists yet, the bootstrap admin of the configuration is created.
 * Serialised by an advisory lock, so several processes starting at once do it once.
 */
export async function bootstrapStaff(em: EntityManager, admin: { email: string; password: string } | undefined): Promise<void> {
  await em.transactional(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(7406611212)');
    let role = await tx.findOne(Role, { name: ADMIN_ROLE });
    if (!role) role = tx.create(Role, { name: ADMIN_ROLE, permissions: [...PERMISSIONS], builtIn: true });
    else role.permissions = [...new Set([...role.permissions, ...PERMISSIONS])].sort();
    if (admin && (await tx.count(StaffUser, {})) === 0) {
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
        after: { email: user.email },
      });
    }
  });
}
