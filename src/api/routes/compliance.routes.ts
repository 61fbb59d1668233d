import { sendFile } from '../http/send-file';
import { customerScopeOf, ownerInScopeOr404 } from '../../platform/customer-scope';
import { z } from 'zod';
import {
  decideDocument,
  DOCUMENT_MAX_BYTES,
  DocumentSchema,
  documentView,
  listDocuments,
  downloadName,
  openDocumentFile,
  StaffDocumentSchema,
  staffDocumentView,
  storeDocument,
} from '../../domain/compliance/documents';
import {
  levelView,
  MAX_LEVEL,
  readLevels,
  setLevel,
  VerificationLevelListSchema,
  VerificationLevelSchema,
} from '../../domain/compliance/verification-levels';
import { DOCUMENT_TYPES } from '../../entities/customer-document.entity';
import { fieldError } from '../../platform/errors';
import { asCustomer, asStaff } from '../http/access';
import { MoneyAmount } from '../http/amounts';
import { readDocumentUpload } from '../http/document-upload';
import { pageQuery, pageSchema } from '../http/paging';
import { defineRoute, json, type RouteSpec } from '../http/route';

const DocumentIdParam = z.object({ document_id: z.uuid() });
const Limit = MoneyAmount.nullable().optional();
const MIB = DOCUMENT_MAX_BYTES / (1024 * 1024);

const UPLOAD_BODY = {
  required: true,
  description: `Two parts: \`type\` and \`file\` (one file, at most ${MIB} MiB).`,
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['type', 'file'],
        properties: {
          type: { type: 'string', enum: [...DOCUMENT_TYPES], description: 'What the document proves' },
          file: {
            type: 'string',
            contentMediaType: 'application/octet-stream',
            description: `A PDF, JPEG or PNG of at most ${MIB} MiB, recognised by its content (its name and part Content-Type are not trusted)`,
          },
        },
      },
      encoding: { file: { contentType: 'application/pdf, image/jpeg, image/png' } },
      example: { type: 'identity', file: '(the bytes of passport.pdf)' },
    },
  },
};

export const complianceRoutes: RouteSpec[] = [
  defineRoute({
    method: 'get',
    path: '/api/admin/verification-levels',
    operationId: 'listVerificationLevels',
    summary: 'What each verification level may do, and which documents reach it',
    description:
      'Levels 0 (every new customer) to 3. Until a broker sets them, every level may trade and withdraw without limits ' +
      'and requires no documents.',
    tags: ['compliance'],
    access: { kind: 'staff', permission: 'manage_settings' },
    responses: { 200: { description: 'The four levels, in order', schema: VerificationLevelListSchema } },
    handler: async ({ em }) => json(200, { items: (await readLevels(em)).map(levelView) }),
  }),
  defineRoute({
    method: 'put',
    path: '/api/admin/verification-levels/{level}',
    operationId: 'setVerificationLevel',
    summary: "Set a verification level's terms",
    description:
      "Replaces the level's terms: a limit left out (or null) is no limit. Limits are money in the currency of the " +
      "account concerned (no conversion): `max_withdrawal_per_day` and `_per_month` count the customer's pending and " +
      "completed withdrawals in its wallet's currency over the UTC day and calendar month; `max_deposit_per_day` counts " +
      'its deposits into accounts of the same currency over the UTC day. A customer rises to the highest level whose ' +
      '`required_documents` are all approved (a level requiring none is reached only when staff set it); level 0 ' +
      'requires none (422). Audited. Takes effect on every API process within a second.',
    tags: ['compliance'],
    access: { kind: 'staff', permission: 'manage_settings' },
    params: z.object({ level: z.coerce.number().int().min(0).max(MAX_LEVEL).describe('0 to 3') }),
    body: z.object({
      required_documents: z.array(z.enum(DOCUMENT_TYPES)).max(DOCUMENT_TYPES.length),
      can_trade: z.boolean(),
      can_withdraw: z.boolean(),
      max_deposit_per_day: Limit,
      max_withdrawal_per_day: Limit,
      max_withdrawal_per_month: Limit,
    }),
    responses: { 200: { description: 'The level as now set', schema: VerificationLevelSchema } },
    handler: async ({ params, body, em, services, caller }) => {
      const terms = await setLevel(em, asStaff(caller), params.level, body);
      services.verificationLevels.invalidate();
      return json(200, levelView(terms));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/customers/me/documents',
    operationId: 'submitMyDocument',
    summary: 'Submit an identity document for verification',
    description:
      `\`multipart/form-data\` with the parts \`type\` (${DOCUMENT_TYPES.map((t) => `\`${t}\``).join(', ')}) and \`file\`: ` +
      `one PDF, JPEG or PNG of at most ${MIB} MiB, recognised by its content whatever its name says (anything else is ` +
      '422 at `file`). The file is encrypted at rest; once submitted it cannot be downloaded again by the customer. It ' +
      'waits for review (`pending`). A file over the limit is 413 and nothing is kept; a missing part, a second file, ' +
      'an unknown `type` or field, an empty file and a body that ends early are 422 naming the part, and nothing is kept.',
    tags: ['compliance'],
    access: { kind: 'customer' },
    requestBody: UPLOAD_BODY,
    responses: {
      201: { description: 'Submitted, pending review', schema: DocumentSchema },
      413: { description: `PAYLOAD_TOO_LARGE: the file is larger than ${MIB} MiB; nothing was kept` },
      415: { description: 'UNSUPPORTED_MEDIA_TYPE: the body is not multipart/form-data' },
    },
    handler: async ({ req, em, services, caller }) => {
      const customerId = asCustomer(caller).customerId;
      const upload = await readDocumentUpload(req, ['type']);
      const type = z.enum(DOCUMENT_TYPES).safeParse(upload.fields.type);
      if (upload.fields.type === undefined) throw fieldError('body', ['type'], 'Field required', 'missing');
      if (!type.success)
        throw fieldError('body', ['type'], `Input should be ${DOCUMENT_TYPES.map((t) => `'${t}'`).join(', ')}`, 'literal_error');
      const file = upload.file();
      const view = await storeDocument(em, services.documentSecrets, customerId, {
        type: type.data,
        fileName: file.name,
        contentType: file.contentType,
        bytes: file.bytes,
      });
      return json(201, view);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/documents',
    operationId: 'listMyDocuments',
    summary: 'Your submitted documents and their review, newest first (metadata only)',
    tags: ['compliance'],
    access: { kind: 'customer' },
    query: z.object(pageQuery()),
    responses: { 200: { description: 'A page of your documents', schema: pageSchema(DocumentSchema) } },
    handler: async ({ query, em, caller }) =>
      json(200, await listDocuments(em, asCustomer(caller).customerId, query, documentView)),
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/customers/{customer_id}/documents',
    operationId: 'listCustomerDocuments',
    summary: "A customer's documents, newest first",
    tags: ['compliance'],
    access: { kind: 'staff', permission: 'manage_compliance' },
    params: z.object({ customer_id: z.uuid() }),
    query: z.object(pageQuery()),
    responses: { 200: { description: 'A page of the documents', schema: pageSchema(StaffDocumentSchema) } },
    handler: async ({ params, query, em, caller }) => {
      await ownerInScopeOr404(em, customerScopeOf(caller), 'customers', params.customer_id, 'Customer');
      return json(200, await listDocuments(em, params.customer_id, query, staffDocumentView));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/documents/{document_id}/file',
    operationId: 'downloadDocumentFile',
    summary: "Download a document's file",
    description:
      'The file as submitted, as an attachment whose Content-Type and file extension are those of the kind recognised ' +
      'from its content at upload (`passport.html` holding a PNG downloads as `passport.png`, `image/png`); the ' +
      'uploaded name is kept as `file_name` only. Every download is audited ' +
      '(`document.downloaded`, with who read it) before a byte is sent.',
    tags: ['compliance'],
    access: { kind: 'staff', permission: 'manage_compliance' },
    params: DocumentIdParam,
    raw: true,
    responses: {
      200: { description: 'The file (application/pdf, image/jpeg or image/png)' },
      404: { description: "No such document (or outside the caller's scope)" },
    },
    handler: async ({ params, em, services, caller, res }) => {
      await ownerInScopeOr404(em, customerScopeOf(caller), 'customer_documents', params.document_id, 'Document');
      const { document, pieces } = await openDocumentFile(em, services.documentSecrets, asStaff(caller), params.document_id);
      return sendFile(res, { name: downloadName(document), contentType: document.contentType, pieces });
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/crm/documents/{document_id}/approve',
    operationId: 'approveDocument',
    summary: 'Approve a pending document',
    description:
      'Audited; the customer gets a notification and a mail in its locale. When the approved documents now cover every ' +
      'type a level requires, the customer rises to the highest such level (event `customer.verified`, a notification ' +
      'and a mail). A decided document is 409 DOCUMENT_NOT_PENDING.',
    tags: ['compliance'],
    access: { kind: 'staff', permission: 'manage_compliance' },
    params: DocumentIdParam,
    responses: {
      200: { description: 'Approved', schema: StaffDocumentSchema, example: { status: 'approved', reason: null } },
      404: { description: "No such document (or outside the caller's scope)" },
      409: { description: 'DOCUMENT_NOT_PENDING: already approved or rejected' },
    },
    handler: async ({ params, em, caller }) => {
      await ownerInScopeOr404(em, customerScopeOf(caller), 'customer_documents', params.document_id, 'Document');
      return json(200, await decideDocument(em, asStaff(caller), params.document_id, { kind: 'approve' }));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/crm/documents/{document_id}/reject',
    operationId: 'rejectDocument',
    summary: 'Reject a pending document, with the reason the customer is told',
    description:
      'Audited; the customer gets a notification and a mail in its locale with the reason. A decided document is 409 ' +
      'DOCUMENT_NOT_PENDING.',
    tags: ['compliance'],
    access: { kind: 'staff', permission: 'manage_compliance' },
    params: DocumentIdParam,
    body: z.object({ reason: z.string().trim().min(1).max(500) }),
    responses: {
      200: { description: 'Rejected', schema: StaffDocumentSchema },
      404: { description: "No such document (or outside the caller's scope)" },
      409: { description: 'DOCUMENT_NOT_PENDING: already approved or rejected' },
    },
    handler: async ({ params, body, em, caller }) => {
      await ownerInScopeOr404(em, customerScopeOf(caller), 'customer_documents', params.document_id, 'Document');
      return json(200, await decideDocument(em, asStaff(caller), params.document_id, { kind: 'reject', reason: body.reason }));
    },
  }),
];
