import type { EntityManager } from '@mikro-orm/postgresql';
import type { Caller, StaffDataScope } from './caller';
import { errors } from './errors';

/**
 * Whose customers' data a caller may see: a customer sees only itself; staff see every
 * customer (`all`), the customers they manage (`own`), or also those of their teams (`team`).
 * Every route that reads or acts on a customer's object asks here, and an object outside the
 * scope is answered 404 as if it did not exist, so nobody learns what exists beyond what they
 * may see. `customerId` null and `staff` null together mean every customer.
 */
export interface CustomerScope {
  readonly customerId: string | null;
  /** A staff caller limited to its managed customers and `teamIds`' customers; null when unlimited. */
  readonly staff: { readonly userId: string; readonly teamIds: readonly string[] } | null;
}

export const EVERY_CUSTOMER: CustomerScope = { customerId: null, staff: null };

function staffScope(scope: StaffDataScope): CustomerScope {
  return scope.kind === 'all'
    ? EVERY_CUSTOMER
    : { customerId: null, staff: { userId: scope.userId, teamIds: scope.kind === 'team' ? scope.teamIds : [] } };
}

export function customerScopeOf(caller: Caller | undefined): CustomerScope {
  if (caller === undefined) return EVERY_CUSTOMER;
  return caller.kind === 'customer' ? { customerId: caller.customerId, staff: null } : staffScope(caller.dataScope);
}

/** Whether the scope sees every customer (no filter to apply). */
export function seesEveryCustomer(scope: CustomerScope): boolean {
  return scope.customerId === null && scope.staff === null;
}

/** Who manages a customer: what a limited staff scope decides on. */
export interface CustomerAssignment {
  readonly id: string;
  readonly accountManagerId: string | null;
  readonly teamId: string | null;
}

/** Whether a customer, known with its manager and team, is within the scope. */
export function assignmentInScope(scope: CustomerScope, customer: CustomerAssignment): boolean {
  if (scope.customerId !== null) return scope.customerId === customer.id;
  if (scope.staff === null) return true;
  return (
    customer.accountManagerId === scope.staff.userId ||
    (customer.teamId !== null && scope.staff.teamIds.includes(customer.teamId))
  );
}

/**
 * Whether an object owned by `ownerId` (a customer's id; null for one no customer owns) is
 * within the scope. A limited staff scope looks the customer's manager and team up: one
 * indexed read, and none for a customer or an unlimited staff caller.
 */
export async function inScope(em: EntityManager, scope: CustomerScope, ownerId: string | null | undefined): Promise<boolean> {
  if (scope.customerId !== null) return scope.customerId === ownerId;
  if (scope.staff === null) return true;
  if (!ownerId) return false;
  const rows = await em.execute<Array<{ account_manager_id: string | null; team_id: string | null }>>(
    'select account_manager_id, team_id from customers where id = ?',
    [ownerId],
  );
  const row = rows[0];
  return (
    row !== undefined && assignmentInScope(scope, { id: ownerId, accountManagerId: row.account_manager_id, teamId: row.team_id })
  );
}

/** The object, or 404 `what not found` when it is absent or outside the scope (the two answer alike). */
export async function inScopeOr404<T>(
  em: EntityManager,
  scope: CustomerScope,
  found: T | null | undefined,
  ownerOf: (found: T) => string | null | undefined,
  what: string,
): Promise<T> {
  if (found === null || found === undefined || !(await inScope(em, scope, ownerOf(found)))) throw errors.notFound(what);
  return found;
}

/**
 * The same rule in SQL, for statements that find, list or lock in one step: `column` holds
 * the row's owner (a customer id), qualified by its table's alias (the fragment's own subquery
 * reads customers, where a bare `id` would name its row), and the statement binds `scopeParams(scope)`: `:customer_id`
 * (or `:<param>`), `:scope_user` and `:scope_teams`. A limited staff scope costs one primary-key
 * probe of customers per row, and nothing when the scope is unlimited (the planner folds the
 * null test away for the bound value). A row no customer owns (an event about a group) is
 * outside a customer's scope but within every staff scope, as the live stream delivers it.
 */
export function scopeSql(column: string, param = 'customer_id'): string {
  return (
    `((:${param}::uuid is null or ${column} = :${param}::uuid) and (:scope_user::uuid is null or ${column} is null or exists (` +
    `select 1 from customers scope_c where scope_c.id = ${column} and (scope_c.account_manager_id = :scope_user::uuid` +
    ` or scope_c.team_id = any(:scope_teams::uuid[])))))`
  );
}

/** The scope as SQL over a customers row aliased `alias` (a customer list filters its own columns). */
export function customerRowScopeSql(alias: string, param = 'customer_id'): string {
  return (
    `((:${param}::uuid is null or ${alias}.id = :${param}::uuid) and (:scope_user::uuid is null or ` +
    `${alias}.account_manager_id = :scope_user::uuid or ${alias}.team_id = any(:scope_teams::uuid[])))`
  );
}

/** Ids as one Postgres array literal: bound as one text value whichever way a statement is sent (em.execute spreads a JS array). */
export function uuidArrayLiteral(ids: readonly string[]): string {
  return `{${ids.join(',')}}`;
}

/** The values `scopeSql` and `customerRowScopeSql` bind (besides the customer's, under its own name). */
export function scopeParams(scope: CustomerScope): {
  customer_id: string | null;
  scope_user: string | null;
  scope_teams: string;
} {
  return {
    customer_id: scope.customerId,
    scope_user: scope.staff?.userId ?? null,
    scope_teams: uuidArrayLiteral(scope.staff?.teamIds ?? []),
  };
}

/** The tables of objects a customer owns (by `customer_id`) that routes fetch by id. */
export type OwnedTable = 'customers' | 'withdrawals' | 'customer_documents' | 'deposit_intents';

/**
 * 404 `what not found` when the object `id` of `table` belongs to a customer outside the
 * scope: its owner's manager and team in one statement, and none at all for an unlimited
 * scope (the route's own read then answers 404 for an absent object). `customers` checks the
 * customer itself, and answers 404 for an absent one whatever the scope.
 */
export async function ownerInScopeOr404(
  em: EntityManager,
  scope: CustomerScope,
  table: OwnedTable,
  id: string,
  what: string,
): Promise<void> {
  if (seesEveryCustomer(scope) && table !== 'customers') return;
  const owner = table === 'customers' ? 'c.id' : 'o.customer_id';
  const from = table === 'customers' ? 'customers c' : `${table} o join customers c on c.id = o.customer_id`;
  const rows = await em.execute<Array<{ id: string; account_manager_id: string | null; team_id: string | null }>>(
    `select ${owner} as id, c.account_manager_id, c.team_id from ${from} where ${table === 'customers' ? 'c' : 'o'}.id = ?`,
    [id],
  );
  const row = rows[0];
  if (!row || !assignmentInScope(scope, { id: row.id, accountManagerId: row.account_manager_id, teamId: row.team_id }))
    throw errors.notFound(what);
}
