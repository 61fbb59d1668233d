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

/** The union of the permissions of a staff user's roles; customers have none. */
export async function permissionsOf(em: EntityManager, type: PrincipalType, id: string): Promise<string[]> {
  if (type !== 'user') return [];
  const rows = await em.execute<Array<{ permission: string }>>(
    'select distinct unnest(r.permissions) as permission from roles r join staff_user_roles ur on ur.role_id = r.id where ur.staff_user_id = ?',
    [id],
  );
  return rows.map((r) => r.permission).sort();
}
