import type { EntityManager } from '@mikro-orm/postgresql';
import { executeBound, executeNamed } from '../../db/bound-statement';
import { Customer } from '../../entities/customer.entity';
import type { PrincipalType } from '../../entities/session.entity';
import { StaffUser } from '../../entities/staff-user.entity';
import { LOGIN_PRINCIPAL, USER_PERMISSIONS } from './identity.queries';

export type Principal = StaffUser | Customer;

export function principalClass(type: PrincipalType): typeof StaffUser | typeof Customer {
  return type === 'user' ? StaffUser : Customer;
}

/** Emails are compared case-insensitively: they are stored lower-cased and looked up that way. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** What a password login reads of a principal: its credentials, nothing to track or write back. */
export interface LoginPrincipal {
  id: string;
  passwordHash: string;
  isActive: boolean;
  totpEnabled: boolean;
  totpSecret: string | null;
}

/**
 * Hot path (every login): the principal as one plain row sent with its email as a parameter,
 * not a managed entity; the entity read built its query through the ORM's query builder and
 * hydrated and tracked an entity the login never changes.
 */
export async function findLoginPrincipal(em: EntityManager, type: PrincipalType, email: string): Promise<LoginPrincipal | null> {
  const [row] = await executeBound<LoginPrincipal>(em, LOGIN_PRINCIPAL[type].bind({ email: normalizeEmail(email) }));
  return row ?? null;
}

export async function findPrincipal(em: EntityManager, type: PrincipalType, id: string): Promise<Principal | null> {
  return (await em.findOne(principalClass(type) as typeof StaffUser, { id })) as Principal | null;
}

/** The union of the permissions of a staff user's roles, sorted (the user_permissions function); customers have none. */
export async function permissionsOf(em: EntityManager, type: PrincipalType, id: string): Promise<string[]> {
  if (type !== 'user') return [];
  const rows = await executeNamed<{ permissions: string[] }>(em, USER_PERMISSIONS.bind({ user_id: id }));
  return rows[0]!.permissions;
}
