import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Customer } from '../../entities/customer.entity';
import type { MailMessage } from '../../entities/mail-message.entity';
import { findPage, inOneSnapshot, type Paging } from '../../db/find-page';
import { Notification } from '../../entities/notification.entity';
import type { SecretBox } from '../../platform/secret-box';
import { errors } from '../../platform/errors';
import type { EventConsumer, OutboxEvent } from '../events/consumers';
import type { EventType } from '../events/event-types';
import { queueMail } from '../mail/mail-outbox';
import { NotifyCustomersJob } from '../../jobs/notify-customers.job';
import { executeNamed } from '../../db/bound-statement';
import { INSERT_NOTIFICATIONS } from './notifications.queries';
import { type MailLinks, NO_LINKS, notificationLanguage, NOTIFIED_CLOSE_REASONS, text, wordsFor } from './notification-texts';
import { TELLINGS } from './tellings';

/** Whether a customer hears about this event. */
export function notifies(event: Pick<OutboxEvent, 'type' | 'customerId' | 'data'>): boolean {
  if (!event.customerId || !(event.type in TELLINGS)) return false;
  if (event.type === 'order.closed') return NOTIFIED_CLOSE_REASONS.has(text(event.data.close_reason));
  // A deposit staff typed in is the desk's doing; one a provider paid is news to the customer.
  if (event.type === 'deposit.completed') return typeof event.data.provider_id === 'string';
  // The customer hears of the desk's public answers, not of its own messages.
  if (event.type === 'conversation.message_added') return event.data.author_type === 'staff' && event.data.internal === false;
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
export async function notifyCustomers(
  tx: EntityManager,
  secrets: SecretBox,
  events: OutboxEvent[],
  links: MailLinks = NO_LINKS,
): Promise<MailMessage[]> {
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
        data: { first_name: customer.firstName, ...telling.mail.data(event.data, notificationLanguage(customer.locale), links) },
      }),
    );
  }
  return mails;
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
  // The unread count from the page's own snapshot, so the two never disagree.
  return inOneSnapshot(em, async (tx) => {
    const page = await findPage(
      tx,
      Notification,
      { customerId },
      paging,
      { orderBy: { createdAt: 'desc', id: 'desc' } },
      notificationView,
    );
    return { ...page, unread_count: await tx.count(Notification, { customerId, readAt: null }) };
  });
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
