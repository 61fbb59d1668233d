import type { Caller } from './caller';
import { errors } from './errors';

/**
 * Whose customers' data a caller may see: a customer sees only itself, staff see every
 * customer. Every route that reads or acts on one customer's object asks here, and an object
 * outside the scope is answered 404 as if it did not exist, so nobody learns what exists
 * beyond what they may see. `customerId` null means every customer.
 */
export interface CustomerScope {
  readonly customerId: string | null;
}

export const EVERY_CUSTOMER: CustomerScope = { customerId: null };

export function customerScopeOf(caller: Caller | undefined): CustomerScope {
  return caller?.kind === 'customer' ? { customerId: caller.customerId } : EVERY_CUSTOMER;
}

/** Whether an object owned by `ownerId` (a customer's id; null for one no customer owns) is within the scope. */
export function inScope(scope: CustomerScope, ownerId: string | null | undefined): boolean {
  return scope.customerId === null || scope.customerId === ownerId;
}

/** The object, or 404 `what not found` when it is absent or outside the scope (the two answer alike). */
export function inScopeOr404<T>(
  scope: CustomerScope,
  found: T | null | undefined,
  ownerOf: (found: T) => string | null | undefined,
  what: string,
): T {
  if (found === null || found === undefined || !inScope(scope, ownerOf(found))) throw errors.notFound(what);
  return found;
}

/**
 * The same rule in SQL, for statements that find and lock in one step: `column` holds the
 * row's owner, and the statement binds the scope's customerId (or null) as `:param`.
 */
export function scopeSql(column: string, param = 'customer_id'): string {
  return `(:${param}::uuid is null or ${column} = :${param}::uuid)`;
}
