import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { MailMessage } from '../../entities/mail-message.entity';
import type { JobProducer } from '../../jobs/job-producer';
import type { SecretBox } from '../../platform/secret-box';
import { executeNamed } from '../../db/bound-statement';
import { dispatchMail, queueMail } from '../mail/mail-outbox';
import { notificationLanguage, TERMS } from '../mail/customer-language';
import { INSERT_DAILY_STATEMENT, STATEMENTS_DUE } from './eod.queries';

const PAGE = 200;

interface DueStatement {
  customer_id: string;
  email: string;
  first_name: string;
  locale: string;
  accounts: StatementAccount[];
}

export interface StatementAccount {
  login: string;
  balance: string;
  equity: string;
  currency: string;
}

/** A customer's accounts at the end of a day, as its statement mail lists them, in its language. */
export function accountsLine(accounts: StatementAccount[], locale: string): string {
  const terms = TERMS[notificationLanguage(locale)];
  return accounts
    .map((a) => `${a.login}: ${terms.balance} ${a.balance} ${a.currency}, ${terms.equity} ${a.equity} ${a.currency}`)
    .join('; ');
}

/**
 * Queues the daily statement of every customer whose accounts moved or held open orders on
 * the date (template `daily_statement`, in the customer's locale), a page at a time: each
 * mail row commits with its (customer, date) key, so a customer gets at most one per date
 * however often this runs. Answers how many it queued.
 */
export async function queueDailyStatements(
  em: EntityManager,
  mailSecrets: SecretBox,
  jobs: JobProducer,
  tradingDate: string,
): Promise<number> {
  let after = '00000000-0000-0000-0000-000000000000';
  let queued = 0;
  for (;;) {
    const due = await executeNamed<DueStatement>(em, STATEMENTS_DUE.bind({ trading_date: tradingDate, after, limit: PAGE }));
    if (due.length === 0) return queued;
    const mails = await em.transactional(async (tx) => {
      const made: MailMessage[] = [];
      for (const c of due) {
        const mailId = randomUUID();
        const taken = await executeNamed(
          tx,
          INSERT_DAILY_STATEMENT.bind({ customer_id: c.customer_id, trading_date: tradingDate, mail_id: mailId }),
        );
        if (taken.length === 0) continue;
        const mail = queueMail(tx, mailSecrets, {
          template: 'daily_statement',
          locale: c.locale,
          to: c.email,
          data: { first_name: c.first_name, trading_date: tradingDate, accounts: accountsLine(c.accounts, c.locale) },
        });
        mail.id = mailId;
        made.push(mail);
      }
      return made;
    });
    for (const mail of mails) await dispatchMail(jobs, mail);
    queued += mails.length;
    after = due[due.length - 1]!.customer_id;
  }
}
