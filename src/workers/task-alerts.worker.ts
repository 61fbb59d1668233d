import { TaskAlertsJob } from '../jobs/task-alerts.job';
import { dispatchMail } from '../domain/mail/mail-outbox';
import { emitTaskAlerts } from '../domain/tasks/task-alerts';
import { defineProcessor } from './processor';

export const taskAlertsProcessor = defineProcessor(TaskAlertsJob, async (_payload, { em, services }) => {
  const { overdue, reminded, mails } = await emitTaskAlerts(em, services.mailSecrets);
  for (const mail of mails) await dispatchMail(services.jobs, mail);
  return { overdue, reminded };
});
