import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Customer } from '../../entities/customer.entity';
import type { MailMessage } from '../../entities/mail-message.entity';
import { findPage, type Paging } from '../../db/find-page';
import { Notification } from '../../entities/notification.entity';
import type { SecretBox } from '../../platform/secret-box';
import { errors } from '../../platform/errors';
import type { EventConsumer, OutboxEvent } from '../events/consumers';
import type { EventType } from '../events/event-types';
import { TransferSchema } from '../money/transfers';
import { DocumentSchema } from '../compliance/documents';
import { WithdrawalSchema } from '../money/withdrawals';
import { OrderSchema } from '../orders/order-view';
import { ChallengeSchema } from '../prop/challenges';
import { PayoutSchema } from '../prop/payouts';
import { queueMail } from '../mail/mail-outbox';
import { NotifyCustomersJob } from '../../jobs/notify-customers.job';
import { executeNamed } from '../../db/bound-statement';
import { INSERT_NOTIFICATIONS } from './notifications.queries';

/** Order closes a customer did not ask for: the desk's bulk close, the risk engine's stop-out. */
const NOTIFIED_CLOSE_REASONS = new Set(['bulk_close', 'stop_out']);

type Data = Record<string, unknown>;
const text = (v: unknown) => (v === null || v === undefined ? '' : String(v));
const money = (d: Data) => `${text(d.amount)} ${text(d.currency)}`.trim();

/** The languages notification texts are written in; any other locale reads English. */
export const NOTIFICATION_LANGUAGES = ['en', 'de'] as const;
type Language = (typeof NOTIFICATION_LANGUAGES)[number];

interface Words {
  title: string;
  body: (d: Data) => string;
}

interface Telling {
  /** The title and body in each language (English is the fallback). */
  words: Record<Language, Words>;
  /**
   * What of the event's data the customer sees (the notification's `data`): a projection the
   * type declares, never the event's data wholesale. Events carry staff-level data for
   * webhooks (a risk rule's class and name, a staff user id, a group): only what is listed
   * here reaches the customer.
   */
  shows: (d: Data) => Data;
  /** The built-in mail template sent beside the notification, and its values. */
  mail?: { template: string; data: (d: Data) => Data };
}

/** The listed fields of the event's data, those it has. */
const fields =
  (...keys: string[]) =>
  (d: Data): Data =>
    Object.fromEntries(keys.filter((k) => k in d).map((k) => [k, d[k]]));

/** The fields of a view the customer already reads on its own routes (the view's schema), less `hidden`. */
const viewFields = (view: z.ZodObject, hidden: string[] = []) => Object.keys(view.shape).filter((k) => !hidden.includes(k));

// Not `decided_by`: which staff user decided is the desk's business.
const payoutShown = fields(...viewFields(PayoutSchema, ['decided_by']));
const withdrawalShown = fields(...viewFields(WithdrawalSchema));
// The account's figures, not its group or customer id.
const accountShown = ['login', 'currency', 'balance', 'equity', 'margin', 'free_margin', 'margin_level'];

// The customer's own view of a document: not who decided it.
const documentShown = fields(...viewFields(DocumentSchema));
const documentMail = (d: Data): Data => ({ document_type: text(d.type), file_name: text(d.file_name) });

const moneyMail = (d: Data): Data => ({
  amount: text(d.amount),
  currency: text(d.currency),
  login: text(d.login ?? d.account_login),
});

/**
 * What each notified event says, in the customer's language as the mails are (the locale, then
 * its language: `de-AT` reads German; anything else English). Amounts and prices are shown as
 * the API writes them, in every language.
 */
const TELLINGS: Partial<Record<EventType, Telling>> = {
  'withdrawal.requested': {
    words: {
      en: {
        title: 'Withdrawal requested',
        body: (d) => `Your request to withdraw ${money(d)} from your wallet ${text(d.login)} awaits approval.`,
      },
      de: {
        title: 'Auszahlung beantragt',
        body: (d) => `Ihr Antrag, ${money(d)} aus Ihrer Wallet ${text(d.login)} auszuzahlen, wartet auf Freigabe.`,
      },
    },
    shows: withdrawalShown,
    mail: { template: 'withdrawal_requested', data: moneyMail },
  },
  'withdrawal.approved': {
    words: {
      en: {
        title: 'Withdrawal approved',
        body: (d) => `Your withdrawal of ${money(d)} from your wallet ${text(d.login)} is approved.`,
      },
      de: {
        title: 'Auszahlung genehmigt',
        body: (d) => `Ihre Auszahlung von ${money(d)} aus Ihrer Wallet ${text(d.login)} ist genehmigt.`,
      },
    },
    shows: withdrawalShown,
    mail: { template: 'withdrawal_approved', data: moneyMail },
  },
  'withdrawal.rejected': {
    words: {
      en: {
        title: 'Withdrawal rejected',
        body: (d) => `Your withdrawal of ${money(d)} was rejected: ${text(d.reason)}. The amount is back in your wallet.`,
      },
      de: {
        title: 'Auszahlung abgelehnt',
        body: (d) => `Ihre Auszahlung von ${money(d)} wurde abgelehnt: ${text(d.reason)}. Der Betrag ist wieder in Ihrer Wallet.`,
      },
    },
    shows: withdrawalShown,
    mail: { template: 'withdrawal_rejected', data: (d) => ({ ...moneyMail(d), reason: text(d.reason) }) },
  },
  'payout.approved': {
    words: {
      en: { title: 'Payout approved', body: (d) => `Your payout of ${money(d)} is approved.` },
      de: { title: 'Gewinnauszahlung genehmigt', body: (d) => `Ihre Gewinnauszahlung von ${money(d)} ist genehmigt.` },
    },
    shows: payoutShown,
    mail: { template: 'payout_approved', data: moneyMail },
  },
  'payout.rejected': {
    words: {
      en: { title: 'Payout rejected', body: (d) => `Your payout of ${money(d)} was rejected: ${text(d.reason)}.` },
      de: {
        title: 'Gewinnauszahlung abgelehnt',
        body: (d) => `Ihre Gewinnauszahlung von ${money(d)} wurde abgelehnt: ${text(d.reason)}.`,
      },
    },
    shows: payoutShown,
    mail: { template: 'payout_rejected', data: (d) => ({ ...moneyMail(d), reason: text(d.reason) }) },
  },
  'order.closed': {
    words: {
      en: {
        title: 'Position closed',
        body: (d) =>
          `Your ${text(d.symbol)} position #${text(d.order)} on account ${text(d.login)} was closed ` +
          `${d.close_reason === 'stop_out' ? 'at stop-out' : 'by the dealing desk'} at ${text(d.close_price)}; profit ${text(d.profit)}.`,
      },
      de: {
        title: 'Position geschlossen',
        body: (d) =>
          `Ihre ${text(d.symbol)}-Position #${text(d.order)} auf Konto ${text(d.login)} wurde ` +
          `${d.close_reason === 'stop_out' ? 'beim Stop-out' : 'vom Handelsdesk'} zu ${text(d.close_price)} geschlossen; Gewinn ${text(d.profit)}.`,
      },
    },
    shows: fields(...viewFields(OrderSchema)),
  },
  'transfer.completed': {
    words: {
      en: {
        title: 'Transfer completed',
        body: (d) =>
          `${text(d.amount)} ${text(d.from_currency)} moved from account ${text(d.from_login)} to account ${text(d.to_login)}` +
          ` (${text(d.converted_amount)} ${text(d.to_currency)}).`,
      },
      de: {
        title: 'Übertrag ausgeführt',
        body: (d) =>
          `${text(d.amount)} ${text(d.from_currency)} wurden von Konto ${text(d.from_login)} auf Konto ${text(d.to_login)} übertragen` +
          ` (${text(d.converted_amount)} ${text(d.to_currency)}).`,
      },
    },
    shows: fields(...viewFields(TransferSchema), 'created_at'),
  },
  'account.margin_call': {
    words: {
      en: {
        title: 'Margin call',
        body: (d) => `The margin level of your account ${text(d.login)} fell to ${text(d.margin_level)} %.`,
      },
      de: {
        title: 'Margin Call',
        body: (d) => `Das Margin-Level Ihres Kontos ${text(d.login)} ist auf ${text(d.margin_level)} % gefallen.`,
      },
    },
    shows: fields(...accountShown, 'margin_call_level'),
    mail: { template: 'margin_call', data: (d) => ({ login: text(d.login), margin_level: text(d.margin_level) }) },
  },
  'document.approved': {
    words: {
      en: { title: 'Document approved', body: (d) => `Your document ${text(d.file_name)} (${text(d.type)}) is approved.` },
      de: {
        title: 'Dokument akzeptiert',
        body: (d) => `Ihr Dokument ${text(d.file_name)} (${text(d.type)}) wurde akzeptiert.`,
      },
    },
    shows: documentShown,
    mail: { template: 'document_approved', data: documentMail },
  },
  'document.rejected': {
    words: {
      en: {
        title: 'Document rejected',
        body: (d) =>
          `Your document ${text(d.file_name)} (${text(d.type)}) was rejected: ${text(d.reason)}. Please submit a new one.`,
      },
      de: {
        title: 'Dokument abgelehnt',
        body: (d) =>
          `Ihr Dokument ${text(d.file_name)} (${text(d.type)}) wurde abgelehnt: ${text(d.reason)}. Bitte reichen Sie ein neues ein.`,
      },
    },
    shows: documentShown,
    mail: { template: 'document_rejected', data: (d) => ({ ...documentMail(d), reason: text(d.reason) }) },
  },
  'customer.verified': {
    words: {
      en: { title: 'Account verified', body: (d) => `Your account is now verified to level ${text(d.verification_level)}.` },
      de: { title: 'Konto verifiziert', body: (d) => `Ihr Konto ist jetzt auf Stufe ${text(d.verification_level)} verifiziert.` },
    },
    shows: fields('verification_level', 'previous_level'),
    mail: { template: 'customer_verified', data: (d) => ({ verification_level: text(d.verification_level) }) },
  },
  // A risk rule's `notify` action: neutral on purpose, a customer is never told its risk class
  // (nor the rule or run that classed it), in the body or the data.
  'account.risk_classified': {
    words: {
      en: {
        title: 'Account review',
        body: (d) => `Your account ${text(d.login)} was reviewed under our trading conditions. Contact us with any questions.`,
      },
      de: {
        title: 'Kontoprüfung',
        body: (d) =>
          `Ihr Konto ${text(d.login)} wurde gemäß unseren Handelsbedingungen geprüft. Bei Fragen wenden Sie sich an uns.`,
      },
    },
    shows: fields('login'),
  },
  'prop.challenge_failed': {
    words: {
      en: {
        title: 'Challenge failed',
        body: (d) => {
          const f = (d.failure ?? {}) as Data;
          return (
            `Phase ${text(d.phase)} of your challenge on account ${text(d.login)} failed (${text(f.rule)}: equity ` +
            `${text(f.equity)}, threshold ${text(f.threshold)}). Its positions are closed and it no longer trades.`
          );
        },
      },
      de: {
        title: 'Challenge nicht bestanden',
        body: (d) => {
          const f = (d.failure ?? {}) as Data;
          return (
            `Phase ${text(d.phase)} Ihrer Challenge auf Konto ${text(d.login)} ist nicht bestanden (${text(f.rule)}: Equity ` +
            `${text(f.equity)}, Schwelle ${text(f.threshold)}). Die Positionen sind geschlossen, das Konto handelt nicht mehr.`
          );
        },
      },
    },
    shows: fields(...viewFields(ChallengeSchema, ['customer_id', 'program_id'])),
    mail: {
      template: 'prop_challenge_failed',
      data: (d) => {
        const f = (d.failure ?? {}) as Data;
        return {
          login: text(d.login),
          phase: text(d.phase),
          rule: text(f.rule),
          threshold: text(f.threshold),
          equity: text(f.equity),
        };
      },
    },
  },
  'prop.challenge_passed': {
    words: {
      en: {
        title: 'Challenge phase passed',
        body: (d) =>
          `You passed phase ${text(d.phase)} on account ${text(d.login)}. Your next stage trades on account ${text(d.next_login)}.`,
      },
      de: {
        title: 'Challenge-Phase bestanden',
        body: (d) =>
          `Sie haben Phase ${text(d.phase)} auf Konto ${text(d.login)} bestanden. Ihre nächste Stufe handelt auf Konto ${text(d.next_login)}.`,
      },
    },
    shows: fields(...viewFields(ChallengeSchema, ['customer_id', 'program_id']), 'next_login', 'next_status'),
    mail: {
      template: 'prop_challenge_passed',
      data: (d) => ({ login: text(d.login), phase: text(d.phase), next_login: text(d.next_login) }),
    },
  },
  'account.stop_out': {
    words: {
      en: {
        title: 'Stop-out',
        body: (d) => `Positions of your account ${text(d.login)} were closed at the stop-out level.`,
      },
      de: {
        title: 'Stop-out',
        body: (d) => `Positionen Ihres Kontos ${text(d.login)} wurden beim Stop-out-Level geschlossen.`,
      },
    },
    shows: fields(...accountShown, 'stopout_level', 'closed_orders'),
  },
  'account.negative_balance_compensated': {
    words: {
      en: {
        title: 'Negative balance covered',
        body: (d) =>
          `The stop-out left your account ${text(d.login)} at ${text(d.balance_before)} ${text(d.currency)}: ` +
          `we covered it with ${text(d.amount)}, and the balance is 0.`,
      },
      de: {
        title: 'Negativer Saldo ausgeglichen',
        body: (d) =>
          `Der Stop-out hat Ihr Konto ${text(d.login)} auf ${text(d.balance_before)} ${text(d.currency)} gebracht: ` +
          `wir haben ${text(d.amount)} gutgeschrieben, der Saldo ist 0.`,
      },
    },
    shows: fields('login', 'currency', 'balance', 'amount', 'balance_before', 'closed_orders'),
  },
};

/** The language of a locale, as mail templates pick theirs (`de-AT`, then `de`), else English. */
export function notificationLanguage(locale: string | null | undefined): Language {
  const language = (locale ?? '').toLowerCase().split('-')[0];
  return (NOTIFICATION_LANGUAGES as readonly string[]).includes(language ?? '') ? (language as Language) : 'en';
}

/** Whether a customer hears about this event. */
export function notifies(event: Pick<OutboxEvent, 'type' | 'customerId' | 'data'>): boolean {
  if (!event.customerId || !(event.type in TELLINGS)) return false;
  if (event.type === 'order.closed') return NOTIFIED_CLOSE_REASONS.has(text(event.data.close_reason));
  return true;
}

/**
 * The notifications consumer (in EVENT_CONSUMERS): the outbox relay hands it the events that
 * concern a customer, and the notify-customers worker turns each into one notification (and,
 * for the events with a built-in mail template, a mail in the customer's locale).
 */
export const NotificationsConsumer: EventConsumer = {
  name: 'notifications',
  wants: notifies,
  kick: NotifyCustomersJob,
};

/**
 * Inside processInbox's transaction: one notification per event (an event seen again, which
 * processInbox already prevents, does nothing: `event_id` is unique), and its mail row. The
 * mails are returned for dispatch after the commit.
 */
export async function notifyCustomers(tx: EntityManager, secrets: SecretBox, events: OutboxEvent[]): Promise<MailMessage[]> {
  const wanted = events.filter(notifies);
  if (wanted.length === 0) return [];
  const customers = new Map(
    (await tx.find(Customer, { id: { $in: [...new Set(wanted.map((e) => e.customerId!))] } })).map((c) => [c.id, c]),
  );
  const told = wanted.flatMap((event) => {
    const customer = customers.get(event.customerId!);
    return customer ? [{ event, customer, telling: TELLINGS[event.type as EventType]! }] : [];
  });
  if (told.length === 0) return [];
  // One statement for the batch; an event already told (never, as processInbox marks it) is skipped.
  const inserted = await executeNamed<{ event_id: string }>(
    tx,
    INSERT_NOTIFICATIONS.bind({
      rows: JSON.stringify(
        told.map(({ event, customer, telling }) => ({
          created_at: event.createdAt,
          customer_id: customer.id,
          event_id: event.id,
          type: event.type,
          ...wordsFor(telling, customer.locale, event.data),
          data: telling.shows(event.data),
        })),
      ),
    }),
  );
  const fresh = new Set(inserted.map((row) => row.event_id));
  const mails: MailMessage[] = [];
  for (const { event, customer, telling } of told) {
    if (!fresh.has(event.id) || !telling.mail || !customer.isActive) continue;
    mails.push(
      queueMail(tx, secrets, {
        template: telling.mail.template,
        locale: customer.locale,
        to: customer.email,
        data: { first_name: customer.firstName, ...telling.mail.data(event.data) },
      }),
    );
  }
  return mails;
}

function wordsFor(telling: Telling, locale: string, data: Data): { title: string; body: string } {
  const words = telling.words[notificationLanguage(locale)];
  return { title: words.title, body: words.body(data) };
}

export const NotificationSchema = z.object({
  id: z.uuid(),
  type: z.string().describe('The event it tells about: `withdrawal.approved`, `order.closed`, ...'),
  title: z.string(),
  body: z.string(),
  data: z
    .record(z.string(), z.unknown())
    .describe("What the customer may see of the event's data (each type lists its fields): `login`, `amount`, ..."),
  is_read: z.boolean(),
  created_at: z.iso.datetime(),
});

export const NotificationListSchema = z.object({
  items: z.array(NotificationSchema),
  unread_count: z.int(),
  page: z.int(),
  page_size: z.int(),
  total: z.int(),
});

export function notificationView(n: Notification): z.output<typeof NotificationSchema> {
  return {
    id: n.id,
    type: n.type,
    title: n.title,
    body: n.body,
    data: n.data,
    is_read: n.readAt !== null && n.readAt !== undefined,
    created_at: n.createdAt.toISOString(),
  };
}

export async function listNotifications(
  em: EntityManager,
  customerId: string,
  paging: Paging,
): Promise<z.output<typeof NotificationListSchema>> {
  const page = await findPage(
    em,
    Notification,
    { customerId },
    paging,
    { orderBy: { createdAt: 'desc', id: 'desc' } },
    notificationView,
  );
  return { ...page, unread_count: await em.count(Notification, { customerId, readAt: null }) };
}

/** Marks one of the customer's notifications read (again: no change); another customer's is 404. */
export async function markRead(em: EntityManager, customerId: string, id: string): Promise<z.output<typeof NotificationSchema>> {
  const n = await em.findOne(Notification, { id, customerId });
  if (!n) throw errors.notFound('Notification');
  if (!n.readAt) {
    n.readAt = new Date();
    await em.flush();
  }
  return notificationView(n);
}

export async function markAllRead(em: EntityManager, customerId: string): Promise<{ marked: number; unread_count: number }> {
  const marked = await em.nativeUpdate(Notification, { customerId, readAt: null }, { readAt: new Date(), updatedAt: new Date() });
  return { marked, unread_count: 0 };
}
