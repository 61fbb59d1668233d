import { z } from 'zod';
import {
  createTask,
  findTask,
  NewTaskSchema,
  taskFilter,
  TaskPatchSchema,
  TaskQuerySchema,
  TaskSchema,
  taskView,
  updateTask,
} from '../../domain/tasks/tasks';
import { createTaskRule, NewTaskRuleSchema, TaskRuleSchema, taskRuleView } from '../../domain/tasks/task-rules';
import { Task, TaskRule } from '../../entities/task.entity';
import { asStaff } from '../http/access';
import { findPage } from '../../db/find-page';
import { pageQuery, pageSchema } from '../http/paging';
import { defineRoute, json, type RouteSpec } from '../http/route';
import { isoInstant } from '../http/timestamps';

const TaskId = z.object({ task_id: z.uuid() });

// Instants in years 1 to 9999 only: the database holds no other (422 at the field, never a 500).
const NewTask = NewTaskSchema.extend({ due_at: isoInstant(), remind_at: isoInstant().optional() });
const TaskPatch = TaskPatchSchema.extend({ due_at: isoInstant().optional(), remind_at: isoInstant().nullable().optional() });
const TaskQuery = TaskQuerySchema.extend({ due_before: isoInstant().optional(), ...pageQuery() });

export const taskRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/api/crm/tasks',
    operationId: 'createTask',
    summary: 'Create a task',
    description:
      "The assignee (the caller when absent) must be an active staff user who can see the customer (422 at assignee_id); a customer outside the caller's scope is 404. " +
      'Audited; emits `task.created`. When `due_at` passes while the task is open or in progress, `task.overdue` is emitted once; at `remind_at`, `task.reminder`; both reach the assignee on the back-office stream and by mail (`task_reminder`).',
    tags: ['tasks'],
    access: { kind: 'staff', permission: 'manage_tasks' },
    body: NewTask,
    responses: { 201: { description: 'Created', schema: TaskSchema }, 404: { description: 'No such customer' } },
    handler: async ({ body, em, caller }) => json(201, await createTask(em, asStaff(caller), body)),
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/tasks',
    operationId: 'listTasks',
    summary: "Tasks within the caller's scope, soonest due first",
    tags: ['tasks'],
    access: { kind: 'staff', permission: 'manage_tasks' },
    query: TaskQuery,
    responses: { 200: { description: 'A page of tasks', schema: pageSchema(TaskSchema) } },
    handler: async ({ query, em, caller }) => {
      const where = await taskFilter(em, asStaff(caller), query);
      const now = new Date();
      return json(
        200,
        await findPage(em, Task, where, query, { orderBy: { dueAt: 'asc', id: 'asc' }, populate: ['targets'] }, (t) =>
          taskView(t, now),
        ),
      );
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/tasks/{task_id}',
    operationId: 'getTask',
    summary: 'One task',
    tags: ['tasks'],
    access: { kind: 'staff', permission: 'manage_tasks' },
    params: TaskId,
    responses: { 200: { description: 'The task', schema: TaskSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, em, caller }) => json(200, taskView(await findTask(em, asStaff(caller), params.task_id))),
  }),
  defineRoute({
    method: 'patch',
    path: '/api/crm/tasks/{task_id}',
    operationId: 'updateTask',
    summary: 'Change a task, or move it to another state',
    description:
      'Only the fields sent change. States: open → in_progress | done | cancelled; in_progress → open | done | cancelled; done → open; cancelled is final. ' +
      'Any other move is 409 TASK_STATE_CONFLICT. The move to done sets completed_at and completed_by and emits `task.completed`. Audited.',
    tags: ['tasks'],
    access: { kind: 'staff', permission: 'manage_tasks' },
    params: TaskId,
    body: TaskPatch,
    responses: {
      200: { description: 'The task after the change', schema: TaskSchema },
      404: { description: 'Not found' },
      409: { description: 'TASK_STATE_CONFLICT' },
    },
    handler: async ({ params, body, em, caller }) => json(200, await updateTask(em, asStaff(caller), params.task_id, body)),
  }),
  defineRoute({
    method: 'post',
    path: '/api/admin/task-rules',
    operationId: 'createTaskRule',
    summary: 'Create a task rule',
    description:
      'Each domain event of `on_event` about a customer makes one task (once per rule and event, however often the event is delivered), ' +
      "due `due_in_minutes` later, assigned to the customer's account manager, a lead of its team, or the named staff user. Audited.",
    tags: ['tasks'],
    access: { kind: 'staff', permission: 'manage_tasks' },
    body: NewTaskRuleSchema,
    responses: { 201: { description: 'Created', schema: TaskRuleSchema } },
    handler: async ({ body, em, caller }) => json(201, await createTaskRule(em, asStaff(caller), body)),
  }),
  defineRoute({
    method: 'get',
    path: '/api/admin/task-rules',
    operationId: 'listTaskRules',
    summary: 'Task rules, newest first',
    tags: ['tasks'],
    access: { kind: 'staff', permission: 'manage_tasks' },
    query: z.object(pageQuery()),
    responses: { 200: { description: 'A page of task rules', schema: pageSchema(TaskRuleSchema) } },
    handler: async ({ query, em }) =>
      json(200, await findPage(em, TaskRule, {}, query, { orderBy: { createdAt: 'desc', id: 'desc' } }, taskRuleView)),
  }),
];
