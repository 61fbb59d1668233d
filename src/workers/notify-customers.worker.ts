import { drainNotifications } from '../domain/notifications/drain-notifications';
import { NotifyCustomersJob } from '../jobs/notify-customers.job';
import { defineProcessor } from './processor';

/** Drains the notifications inbox (see drainNotifications). */
export const notifyCustomersProcessor = defineProcessor(NotifyCustomersJob, async (_payload, { em, services }) =>
  drainNotifications(em, {
    jobs: services.jobs,
    mailSecrets: services.mailSecrets,
    links: { supportConversationUrl: services.config.supportConversationUrl },
  }),
);
