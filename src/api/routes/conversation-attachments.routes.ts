import { sendFile } from '../http/send-file';
import type { Response } from 'express';
import { z } from 'zod';
import {
  AttachmentSchema,
  openConversationAttachment,
  openCustomerAttachment,
  storeAttachment,
  type AttachmentFile,
} from '../../domain/conversations/attachments';
import { scopedConversation } from '../../domain/conversations/conversations';
import { recordAudit } from '../../domain/audit/audit';
import { DOCUMENT_MAX_BYTES } from '../../domain/compliance/documents';
import { customerScopeOf } from '../../platform/customer-scope';
import { asCustomer, asStaff } from '../http/access';
import { readDocumentUpload } from '../http/document-upload';
import { defineRoute, json, type RouteSpec } from '../http/route';

const MIB = DOCUMENT_MAX_BYTES / (1024 * 1024);

const UPLOAD_BODY = {
  required: true,
  description: `One part, \`file\` (at most ${MIB} MiB).`,
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['file'],
        properties: {
          file: {
            type: 'string',
            contentMediaType: 'application/octet-stream',
            description: `A PDF, JPEG or PNG of at most ${MIB} MiB, recognised by its content (its name and part Content-Type are not trusted)`,
          },
        },
      },
      encoding: { file: { contentType: 'application/pdf, image/jpeg, image/png' } },
      example: { file: '(the bytes of statement.pdf)' },
    },
  },
};

const UPLOAD_RULES =
  `\`multipart/form-data\` with one part, \`file\`: a PDF, JPEG or PNG of at most ${MIB} MiB, recognised by its content ` +
  'whatever its name says (anything else is 422 at `file`), with the rules of document uploads: a file over the limit ' +
  'is 413 as soon as the limit is passed, and a missing or empty file, a second file or an unknown field is 422; ' +
  'nothing is kept then. The file is encrypted at rest. An attachment no message takes within a day is deleted.';

const DOWNLOAD_RESPONSES = {
  200: { description: 'The file (application/pdf, image/jpeg or image/png)' },
  404: { description: 'No such attachment of yours (or outside your scope)' },
};

/** Sends an attachment typed by the kind read at upload, never by its uploaded name. */
const sendAttachment = (res: Response, file: AttachmentFile) =>
  sendFile(res, { name: file.downloadName, contentType: file.attachment.contentType, pieces: file.pieces });

const AttachmentId = z.object({ attachment_id: z.uuid() });
const ConversationId = z.object({ conversation_id: z.uuid() });

export const conversationAttachmentRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/customers/me/attachments',
    operationId: 'uploadMyAttachment',
    summary: 'Upload a file to attach to a support message',
    description:
      `${UPLOAD_RULES} Name the answer's \`id\` in \`attachment_ids\` of ` +
      '`POST /customers/me/conversations/{conversation_id}/messages`; a message takes an attachment once.',
    tags: ['conversations'],
    access: { kind: 'customer' },
    requestBody: UPLOAD_BODY,
    responses: {
      201: { description: 'Stored, waiting for a message', schema: AttachmentSchema },
      413: { description: `PAYLOAD_TOO_LARGE: the file is larger than ${MIB} MiB; nothing was kept` },
      415: { description: 'UNSUPPORTED_MEDIA_TYPE: the body is not multipart/form-data' },
    },
    handler: async ({ req, em, services, caller }) => {
      const customerId = asCustomer(caller).customerId;
      const file = (await readDocumentUpload(req, [])).file();
      const view = await storeAttachment(em, services.documentSecrets, {
        customerId,
        uploadedBy: { type: 'customer', id: customerId },
        fileName: file.name,
        contentType: file.contentType,
        bytes: file.bytes,
      });
      return json(201, view);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/attachments/{attachment_id}',
    operationId: 'downloadMyAttachment',
    summary: 'Download an attachment: one you uploaded, or one the desk sent you',
    description:
      'Served as an attachment whose Content-Type and extension are those of the kind recognised at upload; the ' +
      "uploaded name is its stem. Files of the desk's internal notes are not yours (404).",
    tags: ['conversations'],
    access: { kind: 'customer' },
    params: AttachmentId,
    raw: true,
    responses: DOWNLOAD_RESPONSES,
    handler: async ({ params, em, services, caller, res }) =>
      sendAttachment(
        res,
        await openCustomerAttachment(em, services.documentSecrets, asCustomer(caller).customerId, params.attachment_id),
      ),
  }),
  defineRoute({
    method: 'post',
    path: '/api/crm/conversations/{conversation_id}/attachments',
    operationId: 'uploadConversationAttachment',
    summary: 'Upload a file to send in a conversation',
    description:
      `${UPLOAD_RULES} Name the answer's \`id\` in \`attachment_ids\` of ` +
      '`POST /api/crm/conversations/{conversation_id}/messages`. The customer may download it once a public message ' +
      'carries it (never from an internal note). Audited (`conversation.attachment_uploaded`).',
    tags: ['conversations'],
    access: { kind: 'staff', permission: 'reply_conversations' },
    params: ConversationId,
    requestBody: UPLOAD_BODY,
    responses: {
      201: { description: 'Stored, waiting for a message', schema: AttachmentSchema },
      404: { description: 'Not found or outside your scope' },
      413: { description: `PAYLOAD_TOO_LARGE: the file is larger than ${MIB} MiB; nothing was kept` },
      415: { description: 'UNSUPPORTED_MEDIA_TYPE: the body is not multipart/form-data' },
    },
    handler: async ({ req, params, em, services, caller }) => {
      const conversation = await scopedConversation(em, customerScopeOf(caller), params.conversation_id);
      const file = (await readDocumentUpload(req, [])).file();
      const staff = asStaff(caller);
      const view = await storeAttachment(
        em,
        services.documentSecrets,
        {
          customerId: conversation.customerId,
          uploadedBy: { type: 'staff', id: staff.userId },
          fileName: file.name,
          contentType: file.contentType,
          bytes: file.bytes,
        },
        (tx, stored) =>
          recordAudit(tx, staff, {
            action: 'conversation.attachment_uploaded',
            entityType: 'conversation',
            entityId: conversation.id,
            after: { ...stored, customer_id: conversation.customerId },
          }),
      );
      return json(201, view);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/conversations/{conversation_id}/attachments/{attachment_id}',
    operationId: 'downloadConversationAttachment',
    summary: "Download a file of a conversation's messages",
    description:
      'Served as an attachment whose Content-Type and extension are those of the kind recognised at upload. Every ' +
      'download is audited (`conversation.attachment_downloaded`) before a byte is sent.',
    tags: ['conversations'],
    access: { kind: 'staff', permission: 'view_conversations' },
    params: ConversationId.extend(AttachmentId.shape),
    raw: true,
    responses: DOWNLOAD_RESPONSES,
    handler: async ({ params, em, services, caller, res }) => {
      const conversation = await scopedConversation(em, customerScopeOf(caller), params.conversation_id);
      const file = await openConversationAttachment(em, services.documentSecrets, conversation.id, params.attachment_id);
      recordAudit(em, asStaff(caller), {
        action: 'conversation.attachment_downloaded',
        entityType: 'conversation',
        entityId: conversation.id,
        after: { attachment_id: file.attachment.id, customer_id: conversation.customerId, size: file.attachment.size },
      });
      await em.flush();
      return sendAttachment(res, file);
    },
  }),
];
