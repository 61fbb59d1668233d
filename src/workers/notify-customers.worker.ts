import { processInbox } from '../domain/events/consumers';
import { dispatchMail } from '../domain/mail/mail-outbox';
import { NotificationsConsumer, notifyCustomers } from '../domain/notifications/notifications';
import type { MailMessage } from '../entities/mail-message.entity';
import { NotifyCustomersJob } from '../jobs/notify-customers.job';
import { defineProcessor } from './processor';

const BATCH = 100;

/**
 * Drains the notifications inbox: each batch's notifications and mail rows commit with the
 * batch's inbox rows marked processed, so each event notifies once with any number of
 * workers; the mails' send jobs are added after each commit (a lost one is re-added by the relay).
 */
export const notifyCustomersProcessor = defineProcessor(NotifyCustomersJob, async (_payload, { em, services }) => {
  let processed = 0;
  for (;;) {
    let mails: MailMessage[] = [];
    const n = await processInbox(em, NotificationsConsumer.name, BATCH, async (tx, events) => {
      mails = await notifyCustomers(tx, services.mailSecrets, events);
    });
    await Promise.all(mails.map((mail) => dispatchMail(services.jobs, mail)));
    if (n === 0) return { processed };
    processed += n;
  }
});
