import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import {
  CustomerDocument,
  DOCUMENT_CONTENT_TYPES,
  DOCUMENT_STATUSES,
  DOCUMENT_TYPES,
  type DocumentContentType,
  type DocumentType,
} from '../../entities/customer-document.entity';
import { executeNamed } from '../../db/bound-statement';
import { findPage, type Paging } from '../../db/find-page';
import { errors } from '../../platform/errors';
import type { SecretBox } from '../../platform/secret-box';
import { recordAudit, type IntegrationActor } from '../audit/audit';
import { recordEvent } from '../events/outbox';
import type { StaffCaller } from '../../platform/caller';
import {
  APPEND_DOCUMENT_FILE,
  APPROVED_TYPES,
  INSERT_DOCUMENT_FILE,
  LOCK_CUSTOMER_LEVEL,
  READ_DOCUMENT_FILE,
  READ_DOCUMENT_FILE_PIECE,
  SET_CUSTOMER_LEVEL,
} from './compliance.queries';
import { readLevels, type LevelTerms } from './verification-levels';
import { readSealedFile, writeSealedFile, type SealedFileStatements } from './sealed-files';

/** The largest file a customer may submit: 10 MiB. */
export const DOCUMENT_MAX_BYTES = 10 * 1024 * 1024;

export const DocumentSchema = z.object({
  id: z.uuid(),
  type: z.enum(DOCUMENT_TYPES),
  status: z.enum(DOCUMENT_STATUSES),
  file_name: z.string().describe('As the client named the file; its type is recognised from its content, never its name'),
  content_type: z.enum(DOCUMENT_CONTENT_TYPES).describe('Recognised from the content'),
  size: z.int().describe('Bytes'),
  created_at: z.iso.datetime(),
  reason: z.string().nullable().describe('Why it was rejected; null unless rejected'),
});
export type DocumentView = z.output<typeof DocumentSchema>;

/** What staff see: the view with who it belongs to and who decided when. */
export const StaffDocumentSchema = DocumentSchema.extend({
  customer_id: z.uuid(),
  decided_at: z.iso.datetime().nullable().describe('Null while pending'),
  decided_by: z.uuid().nullable().describe('The staff user who decided (for an API token, the user who issued it)'),
});
export type StaffDocumentView = z.output<typeof StaffDocumentSchema>;

/** The data of a customer.verified event: what webhooks receive and the notification shows. */
export const CustomerVerifiedSchema = z.object({
  customer_id: z.uuid(),
  verification_level: z.int().min(1).max(3),
  previous_level: z.int().min(0).max(2),
  source: z.enum(['documents', 'staff']).describe('Approved documents reached the level, or staff set it'),
});

export function documentView(d: CustomerDocument): DocumentView {
  return {
    id: d.id,
    type: d.type,
    status: d.status,
    file_name: d.fileName,
    content_type: d.contentType,
    size: d.size,
    created_at: d.createdAt.toISOString(),
    reason: d.reason ?? null,
  };
}

export function staffDocumentView(d: CustomerDocument): StaffDocumentView {
  return {
    ...documentView(d),
    customer_id: d.customer.id,
    decided_at: d.decidedAt?.toISOString() ?? null,
    decided_by: d.decidedBy ?? null,
  };
}

export interface SubmittedFile {
  type: DocumentType;
  fileName: string;
  contentType: DocumentContentType;
  bytes: Buffer;
}

/**
 * Stores a submitted document: its metadata row and its sealed file in one transaction (a
 * document never exists without its file), with a document.submitted event. Called only once
 * the whole upload has been read and checked, so a refused upload writes nothing.
 */
export async function storeDocument(
  em: EntityManager,
  box: SecretBox,
  customerId: string,
  file: SubmittedFile,
): Promise<DocumentView> {
  return em.transactional(async (tx) => {
    const doc = tx.create(CustomerDocument, {
      customer: customerId,
      type: file.type,
      fileName: file.fileName,
      contentType: file.contentType,
      size: file.bytes.length,
    });
    const view = documentView(doc);
    recordEvent(tx, {
      type: 'document.submitted',
      aggregateType: 'document',
      aggregateId: doc.id,
      customerId,
      data: { ...view, customer_id: customerId },
    });
    // The metadata row first: the file's row references it.
    await tx.flush();
    await writeSealedFile(tx, box, DOCUMENT_FILES, doc.id, file.bytes);
    return view;
  });
}

/** A customer's documents, newest first, a page at a time through the view given. */
export async function listDocuments<V>(
  em: EntityManager,
  customerId: string,
  paging: Paging,
  view: (doc: CustomerDocument) => V,
) {
  return findPage(em, CustomerDocument, { customer: customerId }, paging, { orderBy: { createdAt: 'desc', id: 'desc' } }, view);
}

/**
 * A document's file for staff: opened from its sealed bytes, with an audit row of who read
 * it committed before a byte is sent. A file that cannot be opened fails loudly (UnsealError).
 */
export async function openDocumentFile(
  em: EntityManager,
  box: SecretBox,
  actor: StaffCaller,
  id: string,
): Promise<{ document: CustomerDocument; pieces: Buffer[] }> {
  const document = await em.findOne(CustomerDocument, id);
  if (!document) throw errors.notFound('Document');
  const pieces = await readSealedFile(em, box, DOCUMENT_FILES, id, `the file of document ${id}`);
  if (!pieces) throw errors.notFound('Document file');
  recordAudit(em, actor, {
    action: 'document.downloaded',
    entityType: 'document',
    entityId: id,
    after: { customer_id: document.customer.id, type: document.type, size: document.size },
  });
  await em.flush();
  return { document, pieces };
}

/** Where documents' files are kept (customer_document_files). */
const DOCUMENT_FILES: SealedFileStatements = {
  insert: INSERT_DOCUMENT_FILE,
  append: APPEND_DOCUMENT_FILE,
  meta: READ_DOCUMENT_FILE,
  piece: READ_DOCUMENT_FILE_PIECE,
};

const EXTENSION: Record<DocumentContentType, string> = {
  'application/pdf': 'pdf',
  'image/jpeg': 'jpg',
  'image/png': 'png',
};

/**
 * The name a document's file is downloaded under: the uploaded name's stem with the extension
 * of the kind read from its content. The uploaded name is the customer's word only: a PNG sent
 * as `x.html` must not reach a browser or a desktop as HTML.
 */
export function downloadName(document: Pick<CustomerDocument, 'fileName' | 'contentType'>): string {
  const stem = document.fileName.replace(/\.[^.]*$/, '').trim() || 'document';
  return `${stem}.${EXTENSION[document.contentType]}`;
}

type Decision = { kind: 'approve' } | { kind: 'reject'; reason: string };

/**
 * The highest level whose required documents are all approved, among the levels that require
 * some: a level that requires none is reached only when staff set it (otherwise, with the
 * defaults, any approval would lift everyone to level 3).
 */
export function levelReached(levels: readonly LevelTerms[], approved: ReadonlySet<string>): number {
  let reached = 0;
  for (const l of levels)
    if (l.requiredDocuments.length > 0 && l.requiredDocuments.every((t) => approved.has(t))) reached = Math.max(reached, l.level);
  return reached;
}

/**
 * Approves or rejects a pending document (409 DOCUMENT_NOT_PENDING once decided), audited,
 * with its event (the customer is notified and mailed from it). An approval lifts the customer
 * to the highest level its approved documents reach, never lowers it. The customer's row is
 * locked first: two approvals of one customer's documents take turns, so the second counts the
 * first (otherwise each would see only its own and neither would lift the customer).
 */
export async function decideDocument(
  em: EntityManager,
  actor: StaffCaller | IntegrationActor,
  id: string,
  decision: Decision,
): Promise<StaffDocumentView> {
  const found = await em.findOne(CustomerDocument, id, { fields: ['customer'] });
  if (!found) throw errors.notFound('Document');
  const customerId = found.customer.id;
  return em.transactional(async (tx) => {
    const [locked] = await executeNamed<{ level: number }>(tx, LOCK_CUSTOMER_LEVEL.bind({ customer_id: customerId }));
    const doc = await tx.findOneOrFail(CustomerDocument, id, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (doc.status !== 'pending') throw errors.conflict('DOCUMENT_NOT_PENDING', `This document is already ${doc.status}`);
    const before = staffDocumentView(doc);
    doc.status = decision.kind === 'approve' ? 'approved' : 'rejected';
    if (decision.kind === 'reject') doc.reason = decision.reason;
    doc.decidedAt = new Date();
    // A provider's review has no staff user: the audit row names the integration.
    doc.decidedBy = actor.kind === 'integration' ? null : actor.userId;
    const view = staffDocumentView(doc);
    recordAudit(tx, actor, {
      action: decision.kind === 'approve' ? 'document.approved' : 'document.rejected',
      entityType: 'document',
      entityId: doc.id,
      before,
      after: view,
    });
    recordEvent(tx, {
      type: decision.kind === 'approve' ? 'document.approved' : 'document.rejected',
      aggregateType: 'document',
      aggregateId: doc.id,
      customerId,
      data: view,
    });
    if (decision.kind === 'approve') {
      await tx.flush();
      const approved = new Set(
        (await executeNamed<{ type: string }>(tx, APPROVED_TYPES.bind({ customer_id: customerId }))).map((r) => r.type),
      );
      const current = Number(locked?.level ?? 0);
      const reached = levelReached(await readLevels(tx), approved);
      if (reached > current) await changeLevel(tx, actor, customerId, current, reached, 'documents');
    }
    return view;
  });
}

/** Writes a new level with its audit row, and a customer.verified event when it rises. */
async function changeLevel(
  tx: EntityManager,
  actor: StaffCaller | IntegrationActor,
  customerId: string,
  from: number,
  to: number,
  source: 'documents' | 'staff',
): Promise<void> {
  await executeNamed(tx, SET_CUSTOMER_LEVEL.bind({ customer_id: customerId, level: to }));
  recordAudit(tx, actor, {
    action: 'customer.verification_level_changed',
    entityType: 'customer',
    entityId: customerId,
    before: { verification_level: from },
    after: { verification_level: to, source },
  });
  if (to > from)
    recordEvent(tx, {
      type: 'customer.verified',
      aggregateType: 'customer',
      aggregateId: customerId,
      customerId,
      data: {
        customer_id: customerId,
        verification_level: to,
        previous_level: from,
        source,
      } satisfies z.output<typeof CustomerVerifiedSchema>,
    });
}

/**
 * Staff set a customer's level (PATCH /api/crm/customers/{id}): audited; a rise is a
 * customer.verified event like a promotion by documents. Setting the level it has changes nothing.
 */
export async function setCustomerLevel(
  em: EntityManager,
  actor: StaffCaller,
  customerId: string,
  level: number,
  /** Policy on a staff change, in its transaction (the fraud rules' `verification_change`). */
  onChange?: (tx: EntityManager, change: { from: number; to: number }) => Promise<unknown>,
): Promise<void> {
  await em.transactional(async (tx) => {
    const [locked] = await executeNamed<{ level: number }>(tx, LOCK_CUSTOMER_LEVEL.bind({ customer_id: customerId }));
    if (!locked) throw errors.notFound('Customer');
    const current = Number(locked.level);
    if (current === level) return;
    await changeLevel(tx, actor, customerId, current, level, 'staff');
    await onChange?.(tx, { from: current, to: level });
  });
}
