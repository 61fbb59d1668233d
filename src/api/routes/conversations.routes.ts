import { z } from 'zod';
import {
  getForCustomer,
  getForStaff,
  listForCustomer,
  listForStaff,
  replyByCustomer,
  replyByStaff,
  startByCustomer,
  startByStaff,
  updateByStaff,
} from '../../domain/conversations/conversations';
import {
  Category,
  ConversationSchema,
  ConversationStatusSchema,
  ConversationWithMessagesSchema,
  CUSTOMER_MESSAGE_LIMIT,
  CUSTOMER_MESSAGE_WINDOW_SECONDS,
  MessageBody,
  MessageSchema,
  Priority,
  RefSchema,
  REOPEN_WINDOW_DAYS,
  Subject,
} from '../../domain/conversations/conversation-views';
import { MAX_ATTACHMENTS_PER_MESSAGE } from '../../domain/conversations/attachments';
import { customerScopeOf } from '../../platform/customer-scope';
import { asCustomer, asStaff } from '../http/access';
import { defineRoute, json, type RouteSpec } from '../http/route';
import { isoInstant } from '../http/timestamps';

const ConversationId = z.object({ conversation_id: z.uuid() });
const CustomerId = z.object({ customer_id: z.uuid() });
const NewConversation = z.strictObject({
  subject: Subject,
  body: MessageBody,
  category: Category.optional(),
  ref: RefSchema.optional(),
});
const AttachmentIds = z.array(z.uuid()).max(MAX_ATTACHMENTS_PER_MESSAGE).optional();
const LIMIT_TEXT =
  `At most ${CUSTOMER_MESSAGE_LIMIT} customer messages in any ${CUSTOMER_MESSAGE_WINDOW_SECONDS} seconds, ` +
  'opening messages included: past it, 429 RATE_LIMITED with Retry-After.';

export const conversationRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/customers/me/conversations',
    operationId: 'startMyConversation',
    summary: 'Ask the desk something (start a support conversation)',
    description:
      'Opens a conversation (`open`) with its first message. `ref` points at one of your own withdrawals, ' +
      'deposits, documents, payouts or orders; anything else is 404. ' +
      LIMIT_TEXT,
    tags: ['conversations'],
    access: { kind: 'customer' },
    body: NewConversation,
    responses: {
      201: { description: 'The conversation with its first message', schema: ConversationWithMessagesSchema },
      404: { description: 'The ref is not yours or does not exist' },
      429: { description: 'Too many messages' },
    },
    handler: async ({ body, em, caller }) => json(201, await startByCustomer(em, asCustomer(caller).customerId, body)),
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/conversations',
    operationId: 'listMyConversations',
    summary: 'Your support conversations, latest activity first',
    tags: ['conversations'],
    access: { kind: 'customer' },
    responses: { 200: { description: 'Your conversations', schema: z.object({ items: z.array(ConversationSchema) }) } },
    handler: async ({ em, caller }) => json(200, { items: await listForCustomer(em, asCustomer(caller).customerId) }),
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/conversations/{conversation_id}',
    operationId: 'getMyConversation',
    summary: 'One of your conversations with its messages (the desk’s internal notes are not shown)',
    tags: ['conversations'],
    access: { kind: 'customer' },
    params: ConversationId,
    responses: {
      200: { description: 'The conversation', schema: ConversationWithMessagesSchema },
      404: { description: 'Not yours or none' },
    },
    handler: async ({ params, em, caller }) =>
      json(200, await getForCustomer(em, asCustomer(caller).customerId, params.conversation_id)),
  }),
  defineRoute({
    method: 'post',
    path: '/customers/me/conversations/{conversation_id}/messages',
    operationId: 'replyToMyConversation',
    summary: 'Write in one of your conversations',
    description:
      'A message reopens a `pending`, `snoozed` or `resolved` conversation as `open`; one resolved more than ' +
      `${REOPEN_WINDOW_DAYS} days ago is 409 CONVERSATION_CLOSED (start a new conversation). ` +
      LIMIT_TEXT,
    tags: ['conversations'],
    access: { kind: 'customer' },
    params: ConversationId,
    body: z.strictObject({
      body: MessageBody,
      attachment_ids: AttachmentIds.describe(
        'Files uploaded with `POST /customers/me/attachments` that no message carries yet; any other id is 422 at it',
      ),
    }),
    responses: {
      201: { description: 'The message', schema: MessageSchema },
      404: { description: 'Not yours or none' },
      409: { description: 'CONVERSATION_CLOSED' },
      429: { description: 'Too many messages' },
    },
    handler: async ({ params, body, em, caller }) =>
      json(201, await replyByCustomer(em, asCustomer(caller).customerId, params.conversation_id, body)),
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/conversations',
    operationId: 'listConversations',
    summary: 'The support queue, latest activity first, within your scope',
    tags: ['conversations'],
    access: { kind: 'staff', permission: 'view_conversations' },
    query: z.object({
      status: ConversationStatusSchema.optional(),
      assignee: z.enum(['me', 'unassigned']).optional(),
      customer_id: z.uuid().optional(),
      team_id: z.uuid().optional().describe("Only conversations of customers of this team (the customer's `team_id`)"),
      limit: z.coerce.number().int().min(1).max(500).default(100),
    }),
    responses: { 200: { description: 'Conversations', schema: z.object({ items: z.array(ConversationSchema) }) } },
    handler: async ({ query, em, caller }) =>
      json(200, { items: await listForStaff(em, asStaff(caller), customerScopeOf(caller), query) }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/conversations/{conversation_id}',
    operationId: 'getConversation',
    summary: 'A conversation with every message, internal notes included',
    tags: ['conversations'],
    access: { kind: 'staff', permission: 'view_conversations' },
    params: ConversationId,
    responses: {
      200: { description: 'The conversation', schema: ConversationWithMessagesSchema },
      404: { description: 'Not found or outside your scope' },
    },
    handler: async ({ params, em, caller }) => json(200, await getForStaff(em, customerScopeOf(caller), params.conversation_id)),
  }),
  defineRoute({
    method: 'post',
    path: '/api/crm/conversations/{conversation_id}/messages',
    operationId: 'replyToConversation',
    summary: 'Answer a customer, or add an internal note',
    description:
      'An `internal` note is for the desk only: no customer route, event, stream, notification or webhook carries ' +
      'it. The first public answer meets the first-response target. Audited.',
    tags: ['conversations'],
    access: { kind: 'staff', permission: 'reply_conversations' },
    params: ConversationId,
    body: z.strictObject({
      body: MessageBody,
      internal: z.boolean().default(false),
      attachment_ids: AttachmentIds.describe(
        'Files uploaded with `POST /api/crm/conversations/{conversation_id}/attachments` that no message carries yet; any other id is 422 at it',
      ),
    }),
    responses: {
      201: { description: 'The message', schema: MessageSchema },
      404: { description: 'Not found or outside your scope' },
    },
    handler: async ({ params, body, em, caller }) =>
      json(201, await replyByStaff(em, asStaff(caller), customerScopeOf(caller), params.conversation_id, body)),
  }),
  defineRoute({
    method: 'patch',
    path: '/api/crm/conversations/{conversation_id}',
    operationId: 'updateConversation',
    summary: 'Assign, prioritise, snooze or resolve a conversation',
    description:
      '`snoozed_until` alone snoozes it; `snoozed` needs a future `snoozed_until`. An unknown `assignee_id` is 404. ' +
      'Audited; a status change is event `conversation.status_changed`.',
    tags: ['conversations'],
    access: { kind: 'staff', permission: 'reply_conversations' },
    params: ConversationId,
    body: z.strictObject({
      status: ConversationStatusSchema.optional(),
      assignee_id: z.uuid().nullable().optional(),
      priority: Priority.nullable().optional(),
      snoozed_until: isoInstant().nullable().optional(),
    }),
    responses: {
      200: { description: 'The conversation', schema: ConversationSchema },
      404: { description: 'Not found or outside your scope' },
    },
    handler: async ({ params, body, em, caller }) =>
      json(200, await updateByStaff(em, asStaff(caller), customerScopeOf(caller), params.conversation_id, body)),
  }),
  defineRoute({
    method: 'post',
    path: '/api/crm/customers/{customer_id}/conversations',
    operationId: 'startConversation',
    summary: 'Write to a customer (start a conversation from the desk)',
    description: 'The conversation starts `pending` (awaiting the customer). Audited.',
    tags: ['conversations'],
    access: { kind: 'staff', permission: 'reply_conversations' },
    params: CustomerId,
    body: NewConversation,
    responses: {
      201: { description: 'The conversation with its first message', schema: ConversationWithMessagesSchema },
      404: { description: 'Not found or outside your scope' },
    },
    handler: async ({ params, body, em, caller }) =>
      json(201, await startByStaff(em, asStaff(caller), customerScopeOf(caller), params.customer_id, body)),
  }),
];
