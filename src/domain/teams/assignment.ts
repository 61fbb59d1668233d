import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { BrokerSettings, type AssignmentSettings } from '../../entities/broker-settings.entity';
import { Customer } from '../../entities/customer.entity';
import { StaffUser } from '../../entities/staff-user.entity';
import { Team } from '../../entities/team.entity';
import type { StaffCaller } from '../../platform/caller';
import { customerRowScopeSql, customerScopeOf, inScopeOr404, scopeParams, uuidArrayLiteral } from '../../platform/customer-scope';
import { namedStatement } from '../../platform/named-sql';
import { executeNamed } from '../../db/bound-statement';
import { errors, ValidationFailure } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import { recordEvent } from '../events/outbox';

/**
 * Who manages a customer: its account manager (a staff user) and its team. Staff limited to
 * `own` or `team` scope see customers through these two columns, so assigning is what hands a
 * customer to an agent. Every assignment is audited and emits `customer.assigned`, which the
 * back-office stream carries to the new manager.
 */
export const AssignmentSchema = z.object({
  customer_id: z.uuid(),
  account_manager_id: z.uuid().nullable(),
  team_id: z.uuid().nullable(),
  previous_account_manager_id: z.uuid().nullable(),
  previous_team_id: z.uuid().nullable(),
});
export type AssignmentView = z.output<typeof AssignmentSchema>;

export interface AssignInput {
  account_manager_id?: string | null | undefined;
  team_id?: string | null | undefined;
}

export const MAX_BULK_ASSIGN = 1000;

/** The manager must be an active staff user and the team must exist: 422 at the field otherwise. */
async function checkTargets(em: EntityManager, input: AssignInput, at: (string | number)[] = ['body']): Promise<void> {
  const problems: Array<{ loc: (string | number)[]; msg: string; type: string }> = [];
  if (input.account_manager_id) {
    const user = await em.findOne(StaffUser, input.account_manager_id, { fields: ['id', 'isActive'] });
    if (!user || !user.isActive)
      problems.push({ loc: [...at, 'account_manager_id'], msg: 'No such active staff user', type: 'value_error' });
  }
  if (input.team_id && !(await em.findOne(Team, input.team_id, { fields: ['id'] })))
    problems.push({ loc: [...at, 'team_id'], msg: 'No such team', type: 'value_error' });
  if (problems.length) throw new ValidationFailure(problems);
}

function applyAssignment(em: EntityManager, customer: Customer, input: AssignInput): AssignmentView {
  const view: AssignmentView = {
    customer_id: customer.id,
    previous_account_manager_id: customer.accountManager?.id ?? null,
    previous_team_id: customer.team?.id ?? null,
    account_manager_id: customer.accountManager?.id ?? null,
    team_id: customer.team?.id ?? null,
  };
  if (input.account_manager_id !== undefined) {
    customer.accountManager = input.account_manager_id
      ? em.getReference(StaffUser, input.account_manager_id, { wrapped: true })
      : null;
    view.account_manager_id = input.account_manager_id;
  }
  if (input.team_id !== undefined) {
    customer.team = input.team_id ? em.getReference(Team, input.team_id, { wrapped: true }) : null;
    view.team_id = input.team_id;
  }
  return view;
}

function recordAssignment(em: EntityManager, actor: StaffCaller | 'system', view: AssignmentView): void {
  recordAudit(em, actor, {
    action: 'customer.assigned',
    entityType: 'customer',
    entityId: view.customer_id,
    before: { account_manager_id: view.previous_account_manager_id, team_id: view.previous_team_id },
    after: { account_manager_id: view.account_manager_id, team_id: view.team_id },
  });
  recordEvent(em, {
    type: 'customer.assigned',
    aggregateType: 'customer',
    aggregateId: view.customer_id,
    customerId: view.customer_id,
    data: view,
  });
}

/** POST /api/crm/customers/{id}/assign: a customer outside the caller's scope is 404. */
export async function assignCustomer(
  em: EntityManager,
  actor: StaffCaller,
  customerId: string,
  input: AssignInput,
): Promise<AssignmentView> {
  await checkTargets(em, input);
  return em.transactional(async (tx) => {
    const customer = await inScopeOr404(
      tx,
      customerScopeOf(actor),
      await tx.findOne(Customer, customerId, { lockMode: LockMode.PESSIMISTIC_WRITE }),
      (c) => c.id,
      'Customer',
    );
    const view = applyAssignment(tx, customer, input);
    recordAssignment(tx, actor, view);
    return view;
  });
}

/**
 * POST /api/crm/customers/bulk-assign: every customer or none. An id that does not exist or is
 * outside the caller's scope is 404, and nothing changes; the customers in scope are found in
 * one statement.
 */
export async function bulkAssign(
  em: EntityManager,
  actor: StaffCaller,
  input: AssignInput & { customer_ids: string[] },
): Promise<{ assigned: number; items: AssignmentView[] }> {
  await checkTargets(em, input);
  const ids = [...new Set(input.customer_ids)];
  return em.transactional(async (tx) => {
    const scope = customerScopeOf(actor);
    const visible = await executeNamed<{ id: string }>(
      tx,
      LOCK_VISIBLE_CUSTOMERS.bind({ ids: uuidArrayLiteral(ids), ...scopeParams(scope) }),
    );
    if (visible.length !== ids.length) throw errors.notFound('Customer');
    const customers = await tx.find(Customer, { id: { $in: ids } });
    const items = customers.map((c) => applyAssignment(tx, c, input));
    for (const view of items) recordAssignment(tx, actor, view);
    return { assigned: items.length, items };
  });
}

/** The settings' assignment block, its ids checked: 422 at `assignment.<field>` for an unknown one. */
export async function checkAssignmentSettings(em: EntityManager, settings: AssignmentSettings): Promise<void> {
  const problems: Array<{ loc: (string | number)[]; msg: string; type: string }> = [];
  if (settings.default_manager_id) {
    const user = await em.findOne(StaffUser, settings.default_manager_id, { fields: ['id'] });
    if (!user)
      problems.push({ loc: ['body', 'assignment', 'default_manager_id'], msg: 'No such staff user', type: 'value_error' });
  }
  const teamIds = [...new Set(settings.country_rules.map((r) => r.team_id))];
  const teams = teamIds.length ? await em.find(Team, { id: { $in: teamIds } }, { fields: ['id'] }) : [];
  settings.country_rules.forEach((r, i) => {
    if (!teams.some((t) => t.id === r.team_id))
      problems.push({ loc: ['body', 'assignment', 'country_rules', i, 'team_id'], msg: 'No such team', type: 'value_error' });
  });
  if (problems.length) throw new ValidationFailure(problems);
}

/**
 * Assigns a new customer by the broker's `assignment` settings, in the creating transaction:
 * the first country rule naming its country gives the team, then an active member of that
 * team is picked by the strategy (round robin, or the fewest open tasks); with no team member
 * to pick, the default manager, if any and active. When nothing matches the customer stays
 * unassigned, and only `all`-scope staff see it.
 */
export async function autoAssign(em: EntityManager, customer: Customer, settings: AssignmentSettings): Promise<void> {
  const rule = customer.country ? settings.country_rules.find((r) => r.countries.includes(customer.country!)) : undefined;
  const teamId = rule?.team_id ?? null;
  let managerId: string | null = null;
  if (teamId && settings.strategy !== 'none') managerId = await pickMember(em, teamId, settings.strategy);
  if (!managerId && settings.default_manager_id) {
    const user = await em.findOne(StaffUser, settings.default_manager_id, { fields: ['id', 'isActive'] });
    if (user?.isActive) managerId = user.id;
  }
  if (!teamId && !managerId) return;
  const view = applyAssignment(em, customer, {
    ...(teamId ? { team_id: teamId } : {}),
    ...(managerId ? { account_manager_id: managerId } : {}),
  });
  recordAssignment(em, 'system', view);
}

/**
 * autoAssign by the broker's current settings: what every way a customer comes to exist (staff,
 * self-registration, a lead) calls once it has recorded `customer.created`.
 */
export async function assignNewCustomer(em: EntityManager, customer: Customer): Promise<void> {
  const settings = await em.findOne(BrokerSettings, 1);
  if (settings) await autoAssign(em, customer, settings.assignment);
}

async function pickMember(
  em: EntityManager,
  teamId: string,
  strategy: 'round_robin' | 'least_open_tasks',
): Promise<string | null> {
  if (strategy === 'round_robin') {
    // The cursor moves under the settings row's lock, so racing sign-ups take turns.
    const [row] = await executeNamed<{ user_id: string | null }>(em, ROUND_ROBIN_PICK.bind({ team_id: teamId }));
    return row?.user_id ?? null;
  }
  const [row] = await executeNamed<{ user_id: string }>(em, LEAST_OPEN_TASKS_PICK.bind({ team_id: teamId }));
  return row?.user_id ?? null;
}

/** The customers among `ids` the scope sees, locked in id order. */
const LOCK_VISIBLE_CUSTOMERS = namedStatement<{ ids: string } & ReturnType<typeof scopeParams>>(
  `select c.id from customers c where c.id = any(:ids::uuid[]) and ${customerRowScopeSql('c')} order by c.id for update`,
);

const ROUND_ROBIN_PICK = namedStatement<{ team_id: string }>(
  `with members as (
         select m.user_id, row_number() over (order by m.user_id) - 1 as n, count(*) over () as total
           from team_members m join staff_users s on s.id = m.user_id where m.team_id = :team_id::uuid and s.is_active),
       turn as (update broker_settings set assignment_cursor = assignment_cursor + 1 where id = 1
                  and exists (select 1 from members) returning assignment_cursor - 1 as at)
       select (select user_id from members, turn where n = turn.at % total) as user_id`,
);

/** The active member with the fewest open or started tasks (ties: the lowest id). */
const LEAST_OPEN_TASKS_PICK = namedStatement<{ team_id: string }>(
  `select m.user_id from team_members m join staff_users s on s.id = m.user_id
      where m.team_id = :team_id::uuid and s.is_active
      order by (select count(*) from tasks t where t.assignee_id = m.user_id and t.status in ('open', 'in_progress')), m.user_id
      limit 1`,
);
