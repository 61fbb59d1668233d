import { z } from 'zod';
import { defineJob } from './job-definition';
import { QUEUES } from './queues';

/** Emits task.overdue and task.reminder for the tasks whose time has come; runs on a schedule. */
export const TaskAlertsJob = defineJob({
  name: 'task-alerts',
  queue: QUEUES.events,
  schema: z.object({}),
  // A failed sweep is superseded by the next one: each alert is recorded on its task, so none is told twice.
  options: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 1000 } },
  schedule: { id: 'task-alerts', everyMs: 10_000 },
});
