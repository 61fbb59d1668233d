import type { EntityManager } from '@mikro-orm/postgresql';
import { Customer } from '../../entities/customer.entity';
import type { PrincipalType } from '../../entities/session.entity';
import { StaffUser } from '../../entities/staff-user.entity';

export type Principal = StaffUser | Customer;

export function principalClass(type: PrincipalType): typeof StaffUser | typeof Customer {
  return type === 'user' ? StaffUser : Customer;
}

/** Emails are compared case-insensitively: they are stored lower-cased and looked up that way. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export async function findPrincipalByEmail(em: EntityManager, type: PrincipalType, email: string): Promise<Principal | null> {
  return (await em.findOne(principalClass(type) as typeof StaffUser, { email: normalizeEmail(email) })) as Principal | null;
}

export async function findPrincipal(em: EntityManager, type: PrincipalType, id: string): Promise<Principal | null> {
  return (await em.findOne(principalClass(type) as typeof StaffUser, { id })) as Principal | null;
}

/**
 * The union of the permissions of a staff user's roles, sorted, as a text[] (`?` is the user's
 * id). One definition for permissionsOf and for the login statement that embeds it.
 */
export const USER_PERMISSIONS_SQL = `select coalesce(array_agg(distinct p collate "C" order by p collate "C"), '{}') from roles r join staff_user_roles ur on ur.role_id = r.id, unnest(r.permissions) p where ur.staff_user_id = ?::uuid`;

/** The union of the permissions of a staff user's roles; customers have none. */
export async function permissionsOf(em: EntityManager, type: PrincipalType, id: string): Promise<string[]> {
  if (type !== 'user') return [];
  const rows = await em.execute<Array<{ permissions: string[] }>>(`select (${USER_PERMISSIONS_SQL}) as permissions`, [id]);
  return rows[0]!.permissions;
}
