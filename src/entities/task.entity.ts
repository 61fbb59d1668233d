import { Collection, type Ref } from '@mikro-orm/core';
import { Check, Entity, Index, ManyToOne, OneToMany, Property, Unique } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

export const TASK_KINDS = ['call', 'email', 'meeting', 'follow_up', 'other'] as const;
export const TASK_PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export const TASK_STATUSES = ['open', 'in_progress', 'done', 'cancelled'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];
export type TaskPriority = (typeof TASK_PRIORITIES)[number];
export type TaskStatus = (typeof TASK_STATUSES)[number];

/**
 * A piece of work for a staff user, about a customer or none. `overdueAt` and `remindedAt`
 * record that task.overdue and task.reminder were emitted, so each is emitted once. A task a
 * rule made names the rule and the event, once per pair.
 */
@Entity({ tableName: 'tasks' })
@Index({ properties: ['assigneeId', 'status'] })
@Index({ properties: ['customerId', 'createdAt'] })
@Index({
  name: 'tasks_overdue_due',
  expression: `create index "tasks_overdue_due" on "tasks" ("due_at") where "overdue_at" is null and "status" in ('open', 'in_progress')`,
})
@Index({
  name: 'tasks_reminder_due',
  expression: `create index "tasks_reminder_due" on "tasks" ("remind_at") where "reminded_at" is null and "remind_at" is not null and "status" in ('open', 'in_progress')`,
})
@Unique({ properties: ['ruleId', 'sourceEventId'] })
export class Task extends BaseEntity<
  | 'targets'
  | 'body'
  | 'status'
  | 'remindAt'
  | 'assigneeId'
  | 'customerId'
  | 'createdBy'
  | 'completedAt'
  | 'completedBy'
  | 'overdueAt'
  | 'remindedAt'
  | 'ruleId'
  | 'sourceEventId'
> {
  @Property({ type: 'string', length: 200 })
  title!: string;

  @Property({ type: 'text', nullable: true })
  body?: string | null = null;

  @Property({ type: 'string', length: 16 })
  kind!: TaskKind;

  @Property({ type: 'string', length: 8 })
  priority!: TaskPriority;

  @Property({ type: 'string', length: 12, default: 'open' })
  status: TaskStatus = 'open';

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  dueAt!: Date;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  remindAt?: Date | null = null;

  @Property({ type: 'uuid', nullable: true })
  assigneeId?: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  customerId?: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  createdBy?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  completedAt?: Date | null = null;

  @Property({ type: 'uuid', nullable: true })
  completedBy?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  overdueAt?: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  remindedAt?: Date | null = null;

  @Property({ type: 'uuid', nullable: true })
  ruleId?: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  sourceEventId?: string | null = null;

  /** The records the task is about besides its customer: one row each. */
  @OneToMany(() => TaskTarget, (t) => t.task, { orderBy: { createdAt: 'asc', id: 'asc' } })
  targets = new Collection<TaskTarget>(this);
}

export const TASK_TARGET_TYPES = ['account', 'deposit', 'withdrawal', 'document', 'conversation', 'payout'] as const;
export type TaskTargetType = (typeof TASK_TARGET_TYPES)[number];

/**
 * One record a task is about, of the task's customer: a row per record with one nullable
 * relation per record type, exactly one set. The records themselves carry nothing of the
 * tasks about them, so a new kind of target is a column here, never one on another table.
 */
@Entity({ tableName: 'task_targets' })
@Check({
  name: 'task_targets_one_record',
  expression: 'num_nonnulls(account_login, deposit_id, withdrawal_id, document_id, conversation_id, payout_id) = 1',
})
@Index({ properties: ['accountLogin'] })
@Index({ properties: ['depositId'] })
@Index({ properties: ['withdrawalId'] })
@Index({ properties: ['documentId'] })
@Index({ properties: ['conversationId'] })
@Index({ properties: ['payoutId'] })
export class TaskTarget extends BaseEntity<
  'accountLogin' | 'depositId' | 'withdrawalId' | 'documentId' | 'conversationId' | 'payoutId'
> {
  @ManyToOne({ entity: () => Task, ref: true, deleteRule: 'cascade', index: true })
  task!: Ref<Task>;

  /** An account, by its login as every account route names it (as text, as a target's id is). */
  @Property({ type: 'string', length: 20, nullable: true })
  accountLogin?: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  depositId?: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  withdrawalId?: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  documentId?: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  conversationId?: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  payoutId?: string | null = null;
}

/** Makes a task for each matching domain event about a customer. */
@Entity({ tableName: 'task_rules' })
export class TaskRule extends BaseEntity<'isActive' | 'createdBy'> {
  @Property({ type: 'string', length: 64 })
  onEvent!: string;

  @Property({ type: 'string', length: 200 })
  title!: string;

  @Property({ type: 'string', length: 16 })
  kind!: TaskKind;

  @Property({ type: 'integer' })
  dueInMinutes!: number;

  /** `account_manager`, `team_lead` or a staff user's id. */
  @Property({ type: 'string', length: 36 })
  assignTo!: string;

  @Property({ type: 'boolean', default: true })
  isActive: boolean = true;

  @Property({ type: 'uuid', nullable: true })
  createdBy?: string | null = null;
}
