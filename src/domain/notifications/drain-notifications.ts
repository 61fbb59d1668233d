import type { EntityManager } from '@mikro-orm/postgresql';
import type { MailMessage } from '../../entities/mail-message.entity';
import type { JobProducer } from '../../jobs/job-producer';
import type { SecretBox } from '../../platform/secret-box';
import { processInbox } from '../events/consumers';
import { dispatchMail } from '../mail/mail-outbox';
import { NotificationsConsumer, notifyCustomers } from './notifications';
import type { MailLinks } from './notification-texts';

/** Inbox rows a notifying transaction takes at once. */
const BATCH = 100;

/**
 * Drains the notifications inbox: each batch's notifications and mail rows commit with the
 * batch's inbox rows marked processed, so each event notifies once with any number of
 * workers; the mails' send jobs are added after each commit (a lost one is re-added by the relay).
 */
export async function drainNotifications(
  em: EntityManager,
  deps: { jobs: JobProducer; mailSecrets: SecretBox; links: MailLinks },
): Promise<{ processed: number }> {
  let processed = 0;
  for (;;) {
    let mails: MailMessage[] = [];
    const n = await processInbox(em, NotificationsConsumer.name, BATCH, async (tx, events) => {
      mails = await notifyCustomers(tx, deps.mailSecrets, events, deps.links);
    });
    await Promise.all(mails.map((mail) => dispatchMail(deps.jobs, mail)));
    if (n === 0) return { processed };
    processed += n;
  }
}
