import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import type { MailMessage } from '../../entities/mail-message.entity';
import { StaffUser } from '../../entities/staff-user.entity';
import { Task } from '../../entities/task.entity';
import type { SecretBox } from '../../platform/secret-box';
import { recordEvent } from '../events/outbox';
import { queueMail } from '../mail/mail-outbox';
import { taskView } from './tasks';

const BATCH = 200;

/**
 * The scheduled sweep: every open or started task whose due time has passed gets
 * `task.overdue`, and every one whose reminder time has come `task.reminder`, each once (the
 * task row records it, in the transaction that writes the event), with a `task_reminder` mail
 * to its assignee. Tasks are claimed with SKIP LOCKED, so two workers never tell one twice.
 * Answers the mails to dispatch after the commit.
 */
export async function emitTaskAlerts(
  em: EntityManager,
  secrets: SecretBox,
  now = new Date(),
): Promise<{ overdue: number; reminded: number; mails: MailMessage[] }> {
  return em.transactional(async (tx) => {
    const overdue = await tx.find(
      Task,
      { status: { $in: ['open', 'in_progress'] }, overdueAt: null, dueAt: { $lte: now } },
      { lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE, orderBy: { dueAt: 'asc' }, limit: BATCH, refresh: true },
    );
    const reminders = await tx.find(
      Task,
      { status: { $in: ['open', 'in_progress'] }, remindedAt: null, remindAt: { $lte: now } },
      { lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE, orderBy: { remindAt: 'asc' }, limit: BATCH, refresh: true },
    );
    await tx.populate([...overdue, ...reminders], ['targets']);
    const assigneeIds = [...new Set([...overdue, ...reminders].map((t) => t.assigneeId).filter((id): id is string => !!id))];
    const assignees = assigneeIds.length ? await tx.find(StaffUser, { id: { $in: assigneeIds }, isActive: true }) : [];
    const mails: MailMessage[] = [];
    const tell = (task: Task, type: 'task.overdue' | 'task.reminder') => {
      const view = taskView(task, now);
      recordEvent(tx, { type, aggregateType: 'task', aggregateId: task.id, customerId: task.customerId ?? null, data: view });
      const to = assignees.find((u) => u.id === task.assigneeId);
      if (to)
        mails.push(
          queueMail(tx, secrets, {
            template: 'task_reminder',
            locale: 'en',
            to: to.email,
            data: {
              full_name: to.fullName,
              title: task.title,
              // Words, not API keys: a mail names no code.
              kind: task.kind.replace('_', ' '),
              priority: task.priority,
              due_at: view.due_at,
              event: type === 'task.overdue' ? 'overdue' : 'reminder',
            },
          }),
        );
    };
    for (const task of overdue) {
      task.overdueAt = now;
      tell(task, 'task.overdue');
    }
    for (const task of reminders) {
      task.remindedAt = now;
      tell(task, 'task.reminder');
    }
    await tx.flush();
    return { overdue: overdue.length, reminded: reminders.length, mails };
  });
}
