import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { BrokerSettings } from '../../entities/broker-settings.entity';
import { Conversation, type ConversationStatus } from '../../entities/conversation.entity';
import { ConversationMessage } from '../../entities/conversation-message.entity';
import { Customer } from '../../entities/customer.entity';
import { StaffUser } from '../../entities/staff-user.entity';
import { executeNamed } from '../../db/bound-statement';
import type { StaffCaller } from '../../platform/caller';
import { inScopeOr404, scopeParams, scopeSql, type CustomerScope } from '../../platform/customer-scope';
import { errors, fieldError } from '../../platform/errors';
import { namedStatement } from '../../platform/named-sql';
import { recordAudit } from '../audit/audit';
import { recordEvent } from '../events/outbox';
import {
  CUSTOMER_MESSAGE_LIMIT,
  CUSTOMER_MESSAGE_WINDOW_SECONDS,
  REOPEN_WINDOW_DAYS,
  Priority,
  RefSchema,
  MessageView,
  ConversationView,
  ConversationWithMessagesSchema,
  conversationView,
  messageView,
  DEFAULT_FIRST_RESPONSE_MINUTES,
} from './conversation-views';
import { attachmentsOf, takeAttachments, viewsOf, type AttachmentView } from './attachments';

/**
 * Whether the customer owns the object a ref names: uuids for withdrawals, deposits,
 * documents and payouts, the ticket for an order. Ids of another shape own nothing.
 */
const OWNS_REF = namedStatement<{ type: string; id: string; customer_id: string }>(
  `select 1 as found where (
     (:id::text ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' and (
        (:type::text = 'withdrawal' and exists (select 1 from withdrawals w where w.id::text = lower(:id::text) and w.customer_id = :customer_id::uuid))
     or (:type::text = 'payout' and exists (select 1 from payouts p where p.id::text = lower(:id::text) and p.customer_id = :customer_id::uuid))
     or (:type::text = 'document' and exists (select 1 from customer_documents d where d.id::text = lower(:id::text) and d.customer_id = :customer_id::uuid))
     or (:type::text = 'deposit' and exists (select 1 from deposit_intents d join accounts a on a.id = d.account_id
                                              where d.id::text = lower(:id::text) and a.customer_id = :customer_id::uuid))))
  or (:type::text = 'order' and :id::text ~ '^[0-9]{1,18}$' and exists (
        select 1 from orders o join accounts a on a.id = o.account_id
         where o.ticket = :id::text::bigint and a.customer_id = :customer_id::uuid)))`,
);

async function checkRef(em: EntityManager, customerId: string, ref: z.output<typeof RefSchema> | undefined): Promise<void> {
  if (!ref) return;
  const rows = await executeNamed(em, OWNS_REF.bind({ type: ref.type, id: ref.id, customer_id: customerId }));
  if (rows.length === 0) throw errors.notFound(ref.type[0]!.toUpperCase() + ref.type.slice(1));
}

async function firstResponseMinutes(em: EntityManager): Promise<number> {
  const settings = await em.findOne(BrokerSettings, 1);
  return settings?.supportFirstResponseMinutes ?? DEFAULT_FIRST_RESPONSE_MINUTES;
}

/**
 * Locks the customer row (so concurrent posts of one customer count one after another) and
 * refuses a message past the limit, answering when the oldest message of the window leaves it.
 */
async function guardCustomerRate(em: EntityManager, customerId: string): Promise<void> {
  await em.findOne(Customer, customerId, { lockMode: LockMode.PESSIMISTIC_WRITE });
  const since = new Date(Date.now() - CUSTOMER_MESSAGE_WINDOW_SECONDS * 1000);
  const recent = await em.find(
    ConversationMessage,
    { customerId, authorType: 'customer', createdAt: { $gt: since } },
    { orderBy: { createdAt: 'desc' }, limit: CUSTOMER_MESSAGE_LIMIT, fields: ['createdAt'] },
  );
  if (recent.length >= CUSTOMER_MESSAGE_LIMIT) {
    const oldest = recent[recent.length - 1]!.createdAt.getTime();
    throw errors.rateLimited((oldest + CUSTOMER_MESSAGE_WINDOW_SECONDS * 1000 - Date.now()) / 1000);
  }
}

function messageEvent(em: EntityManager, c: Conversation, m: ConversationMessage, files: AttachmentView[] = []): void {
  // Internal notes are the desk's: no event carries them, so no webhook, stream or notification can.
  if (m.internal) return;
  recordEvent(em, {
    type: 'conversation.message_added',
    aggregateType: 'conversation',
    aggregateId: c.id,
    customerId: c.customerId,
    data: { ...messageView(m, files), subject: c.subject, status: c.status },
  });
}

/** The message takes the attachments it names (422 when one is not the side's to give), and their views. */
async function attach(
  t: EntityManager,
  c: Conversation,
  message: ConversationMessage,
  side: 'customer' | 'staff',
  ids: readonly string[] | undefined,
): Promise<AttachmentView[]> {
  const owner = { customerId: c.customerId, conversationId: c.id, messageId: message.id, uploadedBy: side };
  message.attachmentIds = await takeAttachments(t, ids, owner);
  return viewsOf(t, message.attachmentIds);
}

export function setStatus(em: EntityManager, c: Conversation, to: ConversationStatus, now: Date): void {
  const from = c.status;
  if (from === to) return;
  c.status = to;
  c.statusChangedAt = now;
  c.resolvedAt = to === 'resolved' ? now : null;
  if (to !== 'snoozed') c.snoozedUntil = null;
  recordEvent(em, {
    type: 'conversation.status_changed',
    aggregateType: 'conversation',
    aggregateId: c.id,
    customerId: c.customerId,
    data: { ...conversationView(c), from, to },
  });
}

async function open(
  em: EntityManager,
  customerId: string,
  startedBy: 'customer' | 'staff',
  authorId: string,
  input: { subject: string; body: string; category?: string | undefined; ref?: z.output<typeof RefSchema> | undefined },
): Promise<{ conversation: Conversation; message: ConversationMessage }> {
  const now = new Date();
  const minutes = await firstResponseMinutes(em);
  const conversation = em.create(Conversation, {
    customerId,
    subject: input.subject,
    category: input.category ?? null,
    refType: input.ref?.type ?? null,
    refId: input.ref?.id ?? null,
    // A conversation the desk starts waits for the customer.
    status: startedBy === 'staff' ? 'pending' : 'open',
    startedBy,
    statusChangedAt: now,
    firstResponseDueAt: new Date(now.getTime() + minutes * 60_000),
    firstResponseAt: startedBy === 'staff' ? now : null,
    lastCustomerMessageAt: startedBy === 'customer' ? now : null,
    createdAt: now,
    updatedAt: now,
  });
  const message = em.create(ConversationMessage, {
    conversationId: conversation.id,
    customerId,
    authorType: startedBy,
    authorId,
    body: input.body,
    internal: false,
    attachmentIds: [],
    createdAt: now,
    updatedAt: now,
  });
  recordEvent(em, {
    type: 'conversation.created',
    aggregateType: 'conversation',
    aggregateId: conversation.id,
    customerId,
    data: conversationView(conversation),
  });
  messageEvent(em, conversation, message);
  return { conversation, message };
}

export async function startByCustomer(
  em: EntityManager,
  customerId: string,
  input: { subject: string; body: string; category?: string | undefined; ref?: z.output<typeof RefSchema> | undefined },
): Promise<z.output<typeof ConversationWithMessagesSchema>> {
  return em.transactional(async (tx) => {
    const t = tx as EntityManager;
    await checkRef(t, customerId, input.ref);
    await guardCustomerRate(t, customerId);
    const { conversation, message } = await open(t, customerId, 'customer', customerId, input);
    await t.flush();
    return { ...conversationView(conversation), messages: [messageView(message)] };
  });
}

export async function startByStaff(
  em: EntityManager,
  actor: StaffCaller,
  scope: CustomerScope,
  customerId: string,
  input: { subject: string; body: string; category?: string | undefined; ref?: z.output<typeof RefSchema> | undefined },
): Promise<z.output<typeof ConversationWithMessagesSchema>> {
  return em.transactional(async (tx) => {
    const t = tx as EntityManager;
    await inScopeOr404(t, scope, await t.findOne(Customer, customerId), (c) => c.id, 'Customer');
    await checkRef(t, customerId, input.ref);
    const { conversation, message } = await open(t, customerId, 'staff', actor.userId, input);
    recordAudit(t, actor, {
      action: 'conversation.started',
      entityType: 'conversation',
      entityId: conversation.id,
      after: conversationView(conversation),
    });
    await t.flush();
    return { ...conversationView(conversation), messages: [messageView(message)] };
  });
}

async function messagesOf(em: EntityManager, conversationId: string, withInternal: boolean): Promise<MessageView[]> {
  const messages = await em.find(ConversationMessage, withInternal ? { conversationId } : { conversationId, internal: false }, {
    orderBy: { createdAt: 'asc', id: 'asc' },
    limit: 1000,
  });
  const files = await attachmentsOf(
    em,
    messages.filter((m) => m.attachmentIds.length > 0).map((m) => m.id),
  );
  return messages.map((m) => messageView(m, files.get(m.id)));
}

/** The customer's own conversation, or 404 (another customer's answers alike). */
async function ownConversation(em: EntityManager, customerId: string, id: string, lock = false): Promise<Conversation> {
  const found = await em.findOne(Conversation, id, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
  return inScopeOr404(em, { customerId, staff: null }, found, (c) => c.customerId, 'Conversation');
}

export async function listForCustomer(em: EntityManager, customerId: string): Promise<ConversationView[]> {
  const found = await em.find(Conversation, { customerId }, { orderBy: { updatedAt: 'desc', id: 'desc' }, limit: 500 });
  return found.map(conversationView);
}

export async function getForCustomer(
  em: EntityManager,
  customerId: string,
  id: string,
): Promise<z.output<typeof ConversationWithMessagesSchema>> {
  const c = await ownConversation(em, customerId, id);
  return { ...conversationView(c), messages: await messagesOf(em, c.id, false) };
}

export async function replyByCustomer(
  em: EntityManager,
  customerId: string,
  id: string,
  input: { body: string; attachment_ids?: string[] | undefined },
): Promise<MessageView> {
  return em.transactional(async (tx) => {
    const t = tx as EntityManager;
    const c = await ownConversation(t, customerId, id, true);
    const now = new Date();
    if (c.status === 'resolved' && c.resolvedAt && now.getTime() - c.resolvedAt.getTime() > REOPEN_WINDOW_DAYS * 86_400_000)
      throw errors.conflict(
        'CONVERSATION_CLOSED',
        `This conversation was resolved more than ${REOPEN_WINDOW_DAYS} days ago; start a new conversation`,
      );
    await guardCustomerRate(t, customerId);
    const message = t.create(ConversationMessage, {
      conversationId: c.id,
      customerId,
      authorType: 'customer',
      authorId: customerId,
      body: input.body,
      internal: false,
      attachmentIds: [],
      createdAt: now,
      updatedAt: now,
    });
    const files = await attach(t, c, message, 'customer', input.attachment_ids);
    c.lastCustomerMessageAt = now;
    c.updatedAt = now;
    setStatus(t, c, 'open', now);
    messageEvent(t, c, message, files);
    await t.flush();
    return messageView(message, files);
  });
}

/** The conversation within the staff caller's scope, or 404. */
export async function scopedConversation(
  em: EntityManager,
  scope: CustomerScope,
  id: string,
  lock = false,
): Promise<Conversation> {
  const found = await em.findOne(Conversation, id, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
  return inScopeOr404(em, scope, found, (c) => c.customerId, 'Conversation');
}

export async function getForStaff(
  em: EntityManager,
  scope: CustomerScope,
  id: string,
): Promise<z.output<typeof ConversationWithMessagesSchema>> {
  const c = await scopedConversation(em, scope, id);
  return { ...conversationView(c), messages: await messagesOf(em, c.id, true) };
}

const LIST_FOR_STAFF = namedStatement<
  ReturnType<typeof scopeParams> & {
    status: string | null;
    assignee: string | null;
    unassigned: boolean;
    for_customer: string | null;
    team: string | null;
    limit: number;
  }
>(
  `select c.id from conversations c
    where ${scopeSql('c.customer_id')}
      and (:status::text is null or c.status = :status::text)
      and (:assignee::uuid is null or c.assignee_id = :assignee::uuid)
      and (not :unassigned::boolean or c.assignee_id is null)
      and (:for_customer::uuid is null or c.customer_id = :for_customer::uuid)
      and (:team::uuid is null or exists (select 1 from customers t where t.id = c.customer_id and t.team_id = :team::uuid))
    order by c.updated_at desc, c.id desc limit :limit`,
);

export async function listForStaff(
  em: EntityManager,
  actor: StaffCaller,
  scope: CustomerScope,
  filter: {
    status?: ConversationStatus | undefined;
    assignee?: 'me' | 'unassigned' | undefined;
    customer_id?: string | undefined;
    team_id?: string | undefined;
    limit: number;
  },
): Promise<ConversationView[]> {
  const rows = await executeNamed<{ id: string }>(
    em,
    LIST_FOR_STAFF.bind({
      ...scopeParams(scope),
      status: filter.status ?? null,
      assignee: filter.assignee === 'me' ? actor.userId : null,
      unassigned: filter.assignee === 'unassigned',
      for_customer: filter.customer_id ?? null,
      team: filter.team_id ?? null,
      limit: filter.limit,
    }),
  );
  if (rows.length === 0) return [];
  const found = await em.find(Conversation, { id: { $in: rows.map((r) => r.id) } });
  const byId = new Map(found.map((c) => [c.id, c]));
  return rows.map((r) => conversationView(byId.get(r.id)!));
}

export async function replyByStaff(
  em: EntityManager,
  actor: StaffCaller,
  scope: CustomerScope,
  id: string,
  input: { body: string; internal?: boolean | undefined; attachment_ids?: string[] | undefined },
): Promise<MessageView> {
  return em.transactional(async (tx) => {
    const t = tx as EntityManager;
    const c = await scopedConversation(t, scope, id, true);
    const now = new Date();
    const internal = input.internal ?? false;
    const message = t.create(ConversationMessage, {
      conversationId: c.id,
      customerId: c.customerId,
      authorType: 'staff',
      authorId: actor.userId,
      body: input.body,
      internal,
      attachmentIds: [],
      createdAt: now,
      updatedAt: now,
    });
    const files = await attach(t, c, message, 'staff', input.attachment_ids);
    if (!internal) {
      c.firstResponseAt ??= now;
      c.updatedAt = now;
    }
    messageEvent(t, c, message, files);
    recordAudit(t, actor, {
      action: internal ? 'conversation.note_added' : 'conversation.replied',
      entityType: 'conversation',
      entityId: c.id,
      after: { message_id: message.id, internal, attachment_ids: message.attachmentIds },
    });
    await t.flush();
    return messageView(message, files);
  });
}

export async function updateByStaff(
  em: EntityManager,
  actor: StaffCaller,
  scope: CustomerScope,
  id: string,
  patch: {
    status?: ConversationStatus | undefined;
    assignee_id?: string | null | undefined;
    priority?: z.output<typeof Priority> | null | undefined;
    snoozed_until?: string | null | undefined;
  },
): Promise<ConversationView> {
  return em.transactional(async (tx) => {
    const t = tx as EntityManager;
    const c = await scopedConversation(t, scope, id, true);
    const before = conversationView(c);
    const now = new Date();
    if (patch.assignee_id) {
      const staff = await t.findOne(StaffUser, patch.assignee_id);
      if (!staff) throw errors.notFound('Staff user');
    }
    if (patch.assignee_id !== undefined) c.assigneeId = patch.assignee_id;
    if (patch.priority !== undefined) c.priority = patch.priority;
    const snoozeUntil = patch.snoozed_until ? new Date(patch.snoozed_until) : null;
    const to = patch.status ?? (snoozeUntil ? 'snoozed' : undefined);
    if (to === 'snoozed' && (!snoozeUntil || snoozeUntil.getTime() <= now.getTime()))
      throw fieldError('body', ['snoozed_until'], 'A snoozed conversation needs a future snoozed_until');
    if (to) setStatus(t, c, to, now);
    if (to === 'snoozed') c.snoozedUntil = snoozeUntil;
    c.updatedAt = now;
    const after = conversationView(c);
    recordAudit(t, actor, { action: 'conversation.updated', entityType: 'conversation', entityId: c.id, before, after });
    await t.flush();
    return after;
  });
}
