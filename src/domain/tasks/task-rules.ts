import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { StaffUser } from '../../entities/staff-user.entity';
import { TASK_KINDS, TaskRule } from '../../entities/task.entity';
import type { StaffCaller } from '../../platform/caller';
import { fieldError } from '../../platform/errors';
import { namedStatement } from '../../platform/named-sql';
import { executeNamed } from '../../db/bound-statement';
import { recordAudit } from '../audit/audit';
import { defineConsumer, type OutboxEvent } from '../events/consumers';
import { EVENT_TYPES } from '../events/event-types';
import { eventInsertSql } from '../events/outbox';

/**
 * Task rules: for each domain event of `on_event` about a customer, a task due
 * `due_in_minutes` later, assigned to the customer's account manager, to a lead of its team,
 * or to a named staff user (no assignee when the customer has none). One task per (rule,
 * event), whatever the number of deliveries: the pair is unique on the tasks table. The tasks'
 * own events are not rule triggers, so a rule cannot feed itself.
 */
const TRIGGERS = EVENT_TYPES.filter((t) => !t.startsWith('task.') && !t.startsWith('webhook.') && t !== 'group.updated');

export const TaskRuleSchema = z.object({
  id: z.uuid(),
  on_event: z.string().meta({ examples: ['deposit.completed'] }),
  title: z.string(),
  kind: z.enum(TASK_KINDS),
  due_in_minutes: z.int().meta({ examples: [1440] }),
  assign_to: z
    .string()
    .describe('account_manager, team_lead or a staff user id')
    .meta({ examples: ['account_manager'] }),
  is_active: z.boolean(),
  created_at: z.iso.datetime(),
});
export type TaskRuleView = z.output<typeof TaskRuleSchema>;

export const NewTaskRuleSchema = z.object({
  on_event: z.enum(TRIGGERS).describe('A domain event type about a customer'),
  title: z.string().trim().min(1).max(200),
  kind: z.enum(TASK_KINDS),
  due_in_minutes: z
    .int()
    .min(0)
    .max(525_600)
    .meta({ examples: [1440] }),
  assign_to: z.union([z.enum(['account_manager', 'team_lead']), z.uuid()]),
});

export function taskRuleView(r: TaskRule): TaskRuleView {
  return {
    id: r.id,
    on_event: r.onEvent,
    title: r.title,
    kind: r.kind,
    due_in_minutes: r.dueInMinutes,
    assign_to: r.assignTo,
    is_active: r.isActive,
    created_at: r.createdAt.toISOString(),
  };
}

export async function createTaskRule(
  em: EntityManager,
  actor: StaffCaller,
  input: z.output<typeof NewTaskRuleSchema>,
): Promise<TaskRuleView> {
  if (input.assign_to !== 'account_manager' && input.assign_to !== 'team_lead') {
    const user = await em.findOne(StaffUser, input.assign_to, { fields: ['id', 'isActive'] });
    if (!user?.isActive) throw fieldError('body', ['assign_to'], 'No such active staff user');
  }
  const rule = em.create(TaskRule, {
    onEvent: input.on_event,
    title: input.title,
    kind: input.kind,
    dueInMinutes: input.due_in_minutes,
    assignTo: input.assign_to,
    createdBy: actor.userId,
  });
  const view = taskRuleView(rule);
  recordAudit(em, actor, { action: 'task_rule.created', entityType: 'task_rule', entityId: rule.id, after: view });
  await em.flush();
  return view;
}

/**
 * One rule applied to one event: the task, unless the pair already made one, and its
 * task.created event, in one statement of the relay's transaction.
 */
const APPLY_RULE = namedStatement<{
  rule_id: string;
  event_id: string;
  customer_id: string;
  assign_to: string;
  assignee_user: string | null;
  title: string;
  kind: string;
  due_in_minutes: number;
}>(
  `with c as (select id, account_manager_id, team_id from customers where id = :customer_id::uuid),
   made as (
     insert into tasks (id, created_at, updated_at, title, kind, priority, status, due_at, assignee_id, customer_id, rule_id, source_event_id)
     select gen_random_uuid(), now(), now(), :title, :kind, 'normal', 'open', now() + make_interval(mins => :due_in_minutes::int),
       case :assign_to::text
         when 'account_manager' then c.account_manager_id
         when 'team_lead' then (select m.user_id from team_members m where m.team_id = c.team_id and m.role = 'lead' order by m.user_id limit 1)
         else :assignee_user::uuid end,
       c.id, :rule_id::uuid, :event_id::uuid
     from c
     on conflict (rule_id, source_event_id) do nothing
     returning *),
   told as (${eventInsertSql({
     type: 'task.created',
     aggregateType: 'task',
     aggregateId: 'made.id::text',
     customerId: 'made.customer_id',
     data: `json_build_object('id', made.id, 'title', made.title, 'body', null, 'kind', made.kind, 'priority', made.priority,
        'status', made.status, 'due_at', to_char(made.due_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'remind_at', null,
        'assignee_id', made.assignee_id, 'customer_id', made.customer_id, 'created_by', null, 'completed_at', null, 'completed_by', null,
        'overdue', false, 'rule_id', made.rule_id,
        'created_at', to_char(made.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'updated_at', to_char(made.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`,
     at: 'now()',
     from: 'made',
   })})
   select count(*)::int as made from made`,
);

/** The active rules, read once per relay batch (prepare): what `wants` answers from. */
let rules: TaskRule[] = [];

export const TaskRulesConsumer = defineConsumer({
  name: 'task-rules',
  prepare: async (tx: EntityManager) => {
    rules = await tx.find(TaskRule, { isActive: true });
  },
  wants: (event: OutboxEvent) => event.customerId !== null && rules.some((r) => r.onEvent === event.type),
  take: async (tx: EntityManager, events: readonly OutboxEvent[]) => {
    for (const event of events)
      for (const rule of rules.filter((r) => r.onEvent === event.type))
        await executeNamed(
          tx,
          APPLY_RULE.bind({
            rule_id: rule.id,
            event_id: event.id,
            customer_id: event.customerId!,
            assign_to: rule.assignTo,
            // A named user travels as a uuid of its own: the two keywords are no uuid to cast.
            assignee_user: rule.assignTo === 'account_manager' || rule.assignTo === 'team_lead' ? null : rule.assignTo,
            title: rule.title,
            kind: rule.kind,
            due_in_minutes: rule.dueInMinutes,
          }),
        );
    return [];
  },
});
