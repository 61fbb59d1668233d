import { LockMode, type EntityManager, type FilterQuery } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Customer } from '../../entities/customer.entity';
import { StaffUser } from '../../entities/staff-user.entity';
import {
  Task,
  TASK_KINDS,
  TASK_PRIORITIES,
  TASK_STATUSES,
  TASK_TARGET_TYPES,
  TaskTarget,
  type TaskStatus,
  type TaskTargetType,
} from '../../entities/task.entity';
import { executeNamed } from '../../db/bound-statement';
import { TARGET_OF_CUSTOMER } from './tasks.queries';
import type { StaffCaller } from '../../platform/caller';
import { assignmentInScope, customerScopeOf, ownerInScopeOr404, type CustomerScope } from '../../platform/customer-scope';
import { errors, fieldError } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import { recordEvent } from '../events/outbox';
import { staffDataScope } from '../identity/staff-scope';

/**
 * Tasks for staff (the rules in docs/crm.md). A task about a customer is seen
 * and changed only within the caller's scope (404 outside it); its assignee must be an active
 * staff user who can see that customer. The states move only along the allowed edges; any
 * other move is 409 TASK_STATE_CONFLICT.
 */
const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LOGIN_TEXT = /^[1-9][0-9]{0,15}$/;
const TARGET_ID = new RegExp(`${UUID_TEXT.source.slice(0, -1)}|${LOGIN_TEXT.source.slice(1)}`, 'i');

export const TaskTargetSchema = z
  .strictObject({
    type: z.enum(TASK_TARGET_TYPES),
    id: z.string().regex(TARGET_ID).describe("The record's id; an account's is its login, as text"),
  })
  .refine((t) => (t.type === 'account' ? LOGIN_TEXT.test(t.id) : UUID_TEXT.test(t.id)), {
    message: 'An account is named by its login, any other record by its id (a UUID)',
    path: ['id'],
    params: { type: 'value_error' },
  })
  .meta({ id: 'TaskTarget' })
  .describe("A record of the task's customer the task is about");
export type TaskTargetView = z.output<typeof TaskTargetSchema>;

const TARGET_COLUMN: Record<
  TaskTargetType,
  'accountLogin' | 'depositId' | 'withdrawalId' | 'documentId' | 'conversationId' | 'payoutId'
> = {
  account: 'accountLogin',
  deposit: 'depositId',
  withdrawal: 'withdrawalId',
  document: 'documentId',
  conversation: 'conversationId',
  payout: 'payoutId',
};

export function targetView(t: TaskTarget): TaskTargetView {
  const type = TASK_TARGET_TYPES.find((k) => t[TARGET_COLUMN[k]])!;
  return { type, id: t[TARGET_COLUMN[type]]! };
}

export const TaskSchema = z.object({
  id: z.uuid(),
  title: z.string(),
  body: z.string().nullable(),
  kind: z.enum(TASK_KINDS),
  priority: z.enum(TASK_PRIORITIES),
  status: z.enum(TASK_STATUSES),
  due_at: z.iso.datetime(),
  remind_at: z.iso.datetime().nullable(),
  assignee_id: z.uuid().nullable(),
  customer_id: z.uuid().nullable(),
  created_by: z.uuid().nullable(),
  completed_at: z.iso.datetime().nullable(),
  completed_by: z.uuid().nullable(),
  overdue: z.boolean().describe('Due and still open or in progress'),
  rule_id: z.uuid().nullable().describe('The task rule that made it; null for a task staff created'),
  targets: z
    .array(TaskTargetSchema)
    .describe("The records the task is about besides its customer (a rule's task: the event's record)"),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type TaskView = z.output<typeof TaskSchema>;

const isOpen = (s: TaskStatus) => s === 'open' || s === 'in_progress';

export function taskView(t: Task, now = new Date()): TaskView {
  return {
    id: t.id,
    title: t.title,
    body: t.body ?? null,
    kind: t.kind,
    priority: t.priority,
    status: t.status,
    due_at: t.dueAt.toISOString(),
    remind_at: t.remindAt?.toISOString() ?? null,
    assignee_id: t.assigneeId ?? null,
    customer_id: t.customerId ?? null,
    created_by: t.createdBy ?? null,
    completed_at: t.completedAt?.toISOString() ?? null,
    completed_by: t.completedBy ?? null,
    overdue: isOpen(t.status) && t.dueAt.getTime() <= now.getTime(),
    rule_id: t.ruleId ?? null,
    targets: t.targets.isInitialized() ? t.targets.getItems().map(targetView) : [],
    created_at: t.createdAt.toISOString(),
    updated_at: t.updatedAt.toISOString(),
  };
}

/** The moves a task may make: `cancelled` is terminal, a done task may only be reopened. */
const MOVES: Record<TaskStatus, readonly TaskStatus[]> = {
  open: ['in_progress', 'done', 'cancelled'],
  in_progress: ['open', 'done', 'cancelled'],
  done: ['open'],
  cancelled: [],
};

export const NewTaskSchema = z.object({
  title: z.string().trim().min(1).max(200),
  body: z.string().max(10_000).optional(),
  due_at: z.iso.datetime({ offset: true }),
  remind_at: z.iso.datetime({ offset: true }).optional(),
  assignee_id: z.uuid().optional().describe('An active staff user who can see the customer; the creator when absent'),
  customer_id: z.uuid().optional(),
  kind: z.enum(TASK_KINDS),
  priority: z.enum(TASK_PRIORITIES),
  targets: z
    .array(TaskTargetSchema)
    .max(10)
    .optional()
    .describe("Records of the task's customer it is about (each 422 unless it is that customer's); needs customer_id"),
});

export const TaskPatchSchema = z.object({
  title: z.string().trim().min(1).max(200).optional(),
  body: z.string().max(10_000).nullable().optional(),
  due_at: z.iso.datetime({ offset: true }).optional(),
  remind_at: z.iso.datetime({ offset: true }).nullable().optional(),
  assignee_id: z.uuid().optional(),
  kind: z.enum(TASK_KINDS).optional(),
  priority: z.enum(TASK_PRIORITIES).optional(),
  status: z.enum(TASK_STATUSES).optional(),
});

/** 422 at assignee_id unless the user is active staff whose own scope holds the customer. */
async function assertAssignable(em: EntityManager, assigneeId: string, customerId: string | null): Promise<void> {
  const user = await em.findOne(StaffUser, assigneeId, { fields: ['id', 'isActive'] });
  if (!user || !user.isActive) throw fieldError('body', ['assignee_id'], 'No such active staff user');
  if (!customerId) return;
  const dataScope = await staffDataScope(em, assigneeId);
  if (dataScope.kind === 'all') return;
  const customer = await em.findOne(Customer, customerId, { fields: ['id', 'accountManager', 'team'] });
  const scope: CustomerScope = {
    customerId: null,
    staff: { userId: dataScope.userId, teamIds: dataScope.kind === 'team' ? dataScope.teamIds : [] },
  };
  if (
    !customer ||
    !assignmentInScope(scope, {
      id: customer.id,
      accountManagerId: customer.accountManager?.id ?? null,
      teamId: customer.team?.id ?? null,
    })
  )
    throw fieldError('body', ['assignee_id'], 'The assignee cannot see this customer');
}

/** 422 at a target that is not a record of the task's customer (a task about no customer has none). */
async function assertTargets(em: EntityManager, customerId: string | null, targets: readonly TaskTargetView[]): Promise<void> {
  if (targets.length === 0) return;
  if (!customerId) throw fieldError('body', ['targets'], 'A task about records needs their customer_id');
  for (const [i, t] of targets.entries()) {
    const rows = await executeNamed(
      em,
      TARGET_OF_CUSTOMER.bind({
        type: t.type,
        uuid: t.type === 'account' ? null : t.id,
        login: t.type === 'account' ? t.id : null,
        customer_id: customerId,
      }),
    );
    if (rows.length === 0) throw fieldError('body', ['targets', i, 'id'], `No such ${t.type} of this customer`);
  }
}

export async function createTask(
  em: EntityManager,
  actor: StaffCaller,
  input: z.output<typeof NewTaskSchema>,
): Promise<TaskView> {
  if (input.customer_id) await ownerInScopeOr404(em, customerScopeOf(actor), 'customers', input.customer_id, 'Customer');
  const assigneeId = input.assignee_id ?? actor.userId;
  await assertAssignable(em, assigneeId, input.customer_id ?? null);
  await assertTargets(em, input.customer_id ?? null, input.targets ?? []);
  const task = em.create(Task, {
    title: input.title,
    body: input.body ?? null,
    kind: input.kind,
    priority: input.priority,
    dueAt: new Date(input.due_at),
    remindAt: input.remind_at ? new Date(input.remind_at) : null,
    assigneeId,
    customerId: input.customer_id ?? null,
    createdBy: actor.userId,
  });
  const seen = new Set<string>();
  for (const target of input.targets ?? []) {
    if (seen.has(`${target.type}:${target.id}`)) continue;
    seen.add(`${target.type}:${target.id}`);
    task.targets.add(em.create(TaskTarget, { task, [TARGET_COLUMN[target.type]]: target.id }));
  }
  const view = taskView(task);
  recordAudit(em, actor, { action: 'task.created', entityType: 'task', entityId: task.id, after: view });
  recordEvent(em, {
    type: 'task.created',
    aggregateType: 'task',
    aggregateId: task.id,
    customerId: task.customerId ?? null,
    data: view,
  });
  await em.flush();
  return view;
}

/** A task the caller may see: one about a customer outside its scope is 404. */
export async function findTask(em: EntityManager, caller: StaffCaller, id: string): Promise<Task> {
  const task = await em.findOne(Task, id, { populate: ['targets'] });
  if (!task) throw errors.notFound('Task');
  if (task.customerId) await ownerInScopeOr404(em, customerScopeOf(caller), 'customers', task.customerId, 'Task');
  return task;
}

export async function updateTask(
  em: EntityManager,
  actor: StaffCaller,
  id: string,
  patch: z.output<typeof TaskPatchSchema>,
): Promise<TaskView> {
  await findTask(em, actor, id);
  return em.transactional(async (tx) => {
    const task = (await tx.findOne(Task, id, { lockMode: LockMode.PESSIMISTIC_WRITE }))!;
    await tx.populate(task, ['targets']);
    const before = taskView(task);
    if (patch.status !== undefined && patch.status !== task.status) {
      if (!MOVES[task.status].includes(patch.status))
        throw errors.conflict('TASK_STATE_CONFLICT', `A ${task.status} task cannot become ${patch.status}`);
      if (patch.status === 'done') {
        task.completedAt = new Date();
        task.completedBy = actor.userId;
      } else if (task.status === 'done') {
        task.completedAt = null;
        task.completedBy = null;
      }
      task.status = patch.status;
    }
    if (patch.assignee_id !== undefined) {
      await assertAssignable(tx, patch.assignee_id, task.customerId ?? null);
      task.assigneeId = patch.assignee_id;
    }
    if (patch.title !== undefined) task.title = patch.title;
    if (patch.body !== undefined) task.body = patch.body;
    if (patch.kind !== undefined) task.kind = patch.kind;
    if (patch.priority !== undefined) task.priority = patch.priority;
    if (patch.due_at !== undefined) {
      task.dueAt = new Date(patch.due_at);
      // A new due date is a new deadline: its passing is told again.
      task.overdueAt = null;
    }
    if (patch.remind_at !== undefined) {
      task.remindAt = patch.remind_at ? new Date(patch.remind_at) : null;
      task.remindedAt = null;
    }
    task.updatedAt = new Date();
    const after = taskView(task);
    recordAudit(tx, actor, { action: 'task.updated', entityType: 'task', entityId: task.id, before, after });
    if (before.status !== 'done' && after.status === 'done')
      recordEvent(tx, {
        type: 'task.completed',
        aggregateType: 'task',
        aggregateId: task.id,
        customerId: task.customerId ?? null,
        data: after,
      });
    return after;
  });
}

export const TaskQuerySchema = z.object({
  assignee: z
    .union([z.literal('me'), z.uuid()])
    .optional()
    .describe('`me` or a staff user id'),
  status: z.enum(TASK_STATUSES).optional(),
  customer_id: z.uuid().optional(),
  due_before: z.iso.datetime({ offset: true }).optional(),
  overdue: z.enum(['true', 'false']).optional().describe('true: due and still open or in progress'),
});

/** The filter of a task list within the caller's scope: tasks about no customer, or about one it sees. */
export async function taskFilter(
  em: EntityManager,
  caller: StaffCaller,
  query: z.output<typeof TaskQuerySchema>,
): Promise<FilterQuery<Task>> {
  const and: FilterQuery<Task>[] = [];
  if (query.assignee) and.push({ assigneeId: query.assignee === 'me' ? caller.userId : query.assignee });
  if (query.status) and.push({ status: query.status });
  if (query.customer_id) and.push({ customerId: query.customer_id });
  if (query.due_before) and.push({ dueAt: { $lt: new Date(query.due_before) } });
  if (query.overdue === 'true') and.push({ status: { $in: ['open', 'in_progress'] }, dueAt: { $lte: new Date() } });
  if (query.overdue === 'false') and.push({ $or: [{ status: { $in: ['done', 'cancelled'] } }, { dueAt: { $gt: new Date() } }] });
  const scope = customerScopeOf(caller);
  if (scope.staff) {
    const visible = await em.find(
      Customer,
      { $or: [{ accountManager: scope.staff.userId }, { team: { $in: [...scope.staff.teamIds] } }] },
      { fields: ['id'] },
    );
    and.push({ $or: [{ customerId: null }, { customerId: { $in: visible.map((c) => c.id) } }] });
  }
  return { $and: and };
}
