import { z } from 'zod';
import {
  Conversation,
  CONVERSATION_CATEGORIES,
  CONVERSATION_PRIORITIES,
  CONVERSATION_REF_TYPES,
  CONVERSATION_STATUSES,
} from '../../entities/conversation.entity';
import { ConversationMessage } from '../../entities/conversation-message.entity';
import { AttachmentSchema, type AttachmentView } from './attachments';

/** Customer messages allowed in any sliding window, the opening message included. */
export const CUSTOMER_MESSAGE_LIMIT = 20;
export const CUSTOMER_MESSAGE_WINDOW_SECONDS = 60;
/** A resolved conversation older than this takes a new conversation instead of a reply. */
export const REOPEN_WINDOW_DAYS = 30;
/** A pending conversation the customer leaves unanswered this long is resolved. */
export const PENDING_RESOLVE_DAYS = 7;
export const DEFAULT_FIRST_RESPONSE_MINUTES = 240;

export const Subject = z.string().trim().min(1).max(200);
export const MessageBody = z.string().trim().min(1).max(10_000);
export const Category = z.enum(CONVERSATION_CATEGORIES);
export const Priority = z.enum(CONVERSATION_PRIORITIES);
export const ConversationStatusSchema = z.enum(CONVERSATION_STATUSES);
export const RefSchema = z
  .strictObject({ type: z.enum(CONVERSATION_REF_TYPES), id: z.string().trim().min(1).max(64) })
  .meta({ id: 'ConversationRef' })
  .describe('The withdrawal, deposit, document, payout or order the conversation is about');

export const MessageSchema = z
  .object({
    id: z.uuid(),
    conversation_id: z.uuid(),
    author_type: z.enum(['customer', 'staff']),
    author_id: z.uuid().nullable(),
    body: z.string(),
    internal: z.boolean().describe('A staff note: never shown to the customer'),
    attachment_ids: z.array(z.uuid()),
    attachments: z.array(AttachmentSchema).describe('The files of the message, as `attachment_ids` names them'),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'ConversationMessage' });
export type MessageView = z.output<typeof MessageSchema>;

export const ConversationSchema = z
  .object({
    id: z.uuid(),
    customer_id: z.uuid(),
    subject: z.string(),
    category: Category.nullable(),
    ref: RefSchema.nullable(),
    status: ConversationStatusSchema,
    priority: Priority.nullable(),
    assignee_id: z.uuid().nullable(),
    started_by: z.enum(['customer', 'staff']),
    snoozed_until: z.iso.datetime().nullable(),
    resolved_at: z.iso.datetime().nullable(),
    first_response_due_at: z.iso.datetime(),
    first_response_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Conversation' });
export type ConversationView = z.output<typeof ConversationSchema>;

export const ConversationWithMessagesSchema = ConversationSchema.extend({ messages: z.array(MessageSchema) }).meta({
  id: 'ConversationWithMessages',
});

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export function conversationView(c: Conversation): ConversationView {
  return {
    id: c.id,
    customer_id: c.customerId,
    subject: c.subject,
    category: (c.category ?? null) as ConversationView['category'],
    ref: c.refType && c.refId ? { type: c.refType as (typeof CONVERSATION_REF_TYPES)[number], id: c.refId } : null,
    status: c.status,
    priority: (c.priority ?? null) as ConversationView['priority'],
    assignee_id: c.assigneeId ?? null,
    started_by: c.startedBy,
    snoozed_until: iso(c.snoozedUntil),
    resolved_at: iso(c.resolvedAt),
    first_response_due_at: c.firstResponseDueAt.toISOString(),
    first_response_at: iso(c.firstResponseAt),
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
  };
}

export function messageView(m: ConversationMessage, attachments: readonly AttachmentView[] = []): MessageView {
  return {
    id: m.id,
    conversation_id: m.conversationId,
    author_type: m.authorType,
    author_id: m.authorId ?? null,
    body: m.body,
    internal: m.internal,
    attachment_ids: m.attachmentIds,
    attachments: [...attachments],
    created_at: m.createdAt.toISOString(),
  };
}
