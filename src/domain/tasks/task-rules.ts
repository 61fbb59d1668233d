import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { StaffUser } from '../../entities/staff-user.entity';
import { TASK_KINDS, TASK_TARGET_TYPES, TaskRule } from '../../entities/task.entity';
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
 * `due_in_minutes` later, assigned to the customer's account manager, to an active lead of its
 * team (or, when the team has none, of the nearest team above it), or to a named staff user;
 * no assignee when that person is missing or deactivated. The record the event is about (a
 * deposit, a withdrawal, a document, a conversation, a payout) becomes the task's target row. One task per (rule,
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
  target_type: string | null;
  /** The target's id: a UUID, or an account's login in `target_login` (the other is null, so neither is cast to a type it is not). */
  target_uuid: string | null;
  target_login: string | null;
}>(
  `with recursive c as (select id, account_manager_id, team_id from customers where id = :customer_id::uuid),
   up (team_id, depth) as (
     select c.team_id, 0 from c where c.team_id is not null
     union all
     select t.parent_team_id, up.depth + 1 from up join teams t on t.id = up.team_id
      where t.parent_team_id is not null and up.depth < 32),
   team_lead as (
     select m.user_id from up
       join team_members m on m.team_id = up.team_id and m.role = 'lead'
       join staff_users u on u.id = m.user_id and u.is_active
      order by up.depth, m.created_at, m.user_id limit 1),
   made as (
     insert into tasks (id, created_at, updated_at, title, kind, priority, status, due_at, assignee_id, customer_id, rule_id, source_event_id)
     select gen_random_uuid(), now(), now(), :title, :kind, 'normal', 'open', now() + make_interval(mins => :due_in_minutes::int),
       case :assign_to::text
         when 'account_manager' then (select s.id from staff_users s where s.id = c.account_manager_id and s.is_active)
         when 'team_lead' then (select user_id from team_lead)
         else (select s.id from staff_users s where s.id = :assignee_user::uuid and s.is_active) end,
       c.id, :rule_id::uuid, :event_id::uuid
     from c
     on conflict (rule_id, source_event_id) do nothing
     returning *),
   targeted as (
     insert into task_targets (id, created_at, updated_at, task_id, account_login, deposit_id, withdrawal_id, document_id, conversation_id, payout_id)
     select gen_random_uuid(), now(), now(), made.id,
       case when :target_type::text = 'account' then :target_login::text end,
       case when :target_type::text = 'deposit' then :target_uuid::uuid end,
       case when :target_type::text = 'withdrawal' then :target_uuid::uuid end,
       case when :target_type::text = 'document' then :target_uuid::uuid end,
       case when :target_type::text = 'conversation' then :target_uuid::uuid end,
       case when :target_type::text = 'payout' then :target_uuid::uuid end
     from made where :target_type::text is not null
     returning task_id),
   told as (${eventInsertSql({
     type: 'task.created',
     aggregateType: 'task',
     aggregateId: 'made.id::text',
     customerId: 'made.customer_id',
     data: `json_build_object('id', made.id, 'title', made.title, 'body', null, 'kind', made.kind, 'priority', made.priority,
        'status', made.status, 'due_at', to_char(made.due_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'remind_at', null,
        'assignee_id', made.assignee_id, 'customer_id', made.customer_id, 'created_by', null, 'completed_at', null, 'completed_by', null,
        'overdue', false, 'rule_id', made.rule_id,
        'targets', case when :target_type::text is null then '[]'::json
          else json_build_array(json_build_object('type', :target_type::text, 'id', coalesce(:target_login::text, :target_uuid::text))) end,
        'created_at', to_char(made.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'updated_at', to_char(made.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`,
     at: 'now()',
     from: 'made',
   })})
   select count(*)::int as made from made`,
);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LOGIN = /^[1-9][0-9]{0,15}$/;

/** The record an event is about, when it is one a task can target (an account, a deposit, ...): the task's target row. */
function eventTarget(event: OutboxEvent): {
  target_type: string | null;
  target_uuid: string | null;
  target_login: string | null;
} {
  const type = TASK_TARGET_TYPES.find((t) => t === event.aggregateType);
  const named = type === 'account' ? LOGIN.test(event.aggregateId) : UUID.test(event.aggregateId);
  if (!type || !named) return { target_type: null, target_uuid: null, target_login: null };
  return type === 'account'
    ? { target_type: type, target_uuid: null, target_login: event.aggregateId }
    : { target_type: type, target_uuid: event.aggregateId, target_login: null };
}

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
            ...eventTarget(event),
          }),
        );
    return [];
  },
});
