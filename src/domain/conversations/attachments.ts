import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { ConversationAttachment } from '../../entities/conversation-attachment.entity';
import { ConversationMessage } from '../../entities/conversation-message.entity';
import { DOCUMENT_CONTENT_TYPES, type DocumentContentType } from '../../entities/customer-document.entity';
import { executeNamed } from '../../db/bound-statement';
import { errors, ValidationFailure } from '../../platform/errors';
import type { SecretBox } from '../../platform/secret-box';
import { uuidArrayLiteral } from '../../platform/customer-scope';
import { downloadName } from '../compliance/documents';
import { readSealedFile, writeSealedFile, type SealedFileStatements } from '../compliance/sealed-files';
import {
  APPEND_ATTACHMENT_FILE,
  INSERT_ATTACHMENT_FILE,
  READ_ATTACHMENT_FILE,
  READ_ATTACHMENT_FILE_PIECE,
  TAKE_ATTACHMENTS,
} from './conversations.queries';

/** Where attachments' bytes are kept, written and read as documents' are. */
const ATTACHMENT_FILES: SealedFileStatements = {
  insert: INSERT_ATTACHMENT_FILE,
  append: APPEND_ATTACHMENT_FILE,
  meta: READ_ATTACHMENT_FILE,
  piece: READ_ATTACHMENT_FILE_PIECE,
};

/**
 * Files that go with support messages. An attachment is uploaded first (the document file
 * rules: a PDF, JPEG or PNG of at most 10 MiB, recognised by its content), sealed at rest as
 * documents are, and belongs to one customer; a message then takes it, once. One no message
 * took is removed by the retention sweep after a day.
 */
export const AttachmentSchema = z
  .object({
    id: z.uuid(),
    file_name: z
      .string()
      .describe('As the client named the file; its type is recognised from its content, never its name')
      .meta({ examples: ['receipt.pdf'] }),
    content_type: z.enum(DOCUMENT_CONTENT_TYPES).describe('Recognised from the content; the download is served as this'),
    size: z
      .int()
      .describe('Bytes')
      .meta({ examples: [48213] }),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'ConversationAttachment' });
export type AttachmentView = z.output<typeof AttachmentSchema>;

export const MAX_ATTACHMENTS_PER_MESSAGE = 10;

export function attachmentView(a: ConversationAttachment): AttachmentView {
  return {
    id: a.id,
    file_name: a.fileName,
    content_type: a.contentType,
    size: a.size,
    created_at: a.createdAt.toISOString(),
  };
}

export interface AttachmentUpload {
  customerId: string;
  uploadedBy: { type: 'customer' | 'staff'; id: string };
  fileName: string;
  contentType: DocumentContentType;
  bytes: Buffer;
}

/**
 * Stores an attachment: its row and its sealed bytes in one transaction, once the whole upload
 * is read and checked; `also` adds to that transaction (a staff upload's audit row).
 */
export async function storeAttachment(
  em: EntityManager,
  box: SecretBox,
  file: AttachmentUpload,
  also?: (tx: EntityManager, view: AttachmentView) => void,
): Promise<AttachmentView> {
  return em.transactional(async (tx) => {
    const attachment = tx.create(ConversationAttachment, {
      customerId: file.customerId,
      uploadedByType: file.uploadedBy.type,
      uploadedBy: file.uploadedBy.id,
      fileName: file.fileName,
      contentType: file.contentType,
      size: file.bytes.length,
    });
    await tx.flush();
    await writeSealedFile(tx, box, ATTACHMENT_FILES, attachment.id, file.bytes);
    const view = attachmentView(attachment);
    also?.(tx, view);
    return view;
  });
}

/**
 * Gives a new message the attachments it names, in the message's transaction: each must be a
 * free attachment of the conversation's customer uploaded by the same side (a customer never takes a file the desk
 * uploaded and has not sent yet), otherwise the whole message is refused, 422
 * at the first id that is not (another customer's id answers as an unknown one).
 */
export async function takeAttachments(
  tx: EntityManager,
  ids: readonly string[] | undefined,
  owner: { customerId: string; conversationId: string; messageId: string; uploadedBy: 'customer' | 'staff' },
): Promise<string[]> {
  const wanted = [...new Set(ids ?? [])];
  if (wanted.length === 0) return [];
  const taken = await executeNamed<{ id: string }>(
    tx,
    TAKE_ATTACHMENTS.bind({
      ids: uuidArrayLiteral(wanted),
      customer_id: owner.customerId,
      message_id: owner.messageId,
      conversation_id: owner.conversationId,
      uploaded_by_type: owner.uploadedBy,
    }),
  );
  const got = new Set(taken.map((r) => r.id));
  const missing = (ids ?? []).findIndex((id) => !got.has(id));
  if (missing >= 0)
    throw new ValidationFailure([
      {
        loc: ['body', 'attachment_ids', missing],
        msg: 'No such attachment of yours, or it is already on a message',
        type: 'value_error',
      },
    ]);
  return wanted;
}

/** The views of attachments just taken, in the order the message names them. */
export async function viewsOf(em: EntityManager, ids: readonly string[]): Promise<AttachmentView[]> {
  if (ids.length === 0) return [];
  const found = await em.find(ConversationAttachment, { id: { $in: [...ids] } }, { refresh: true });
  return ids.flatMap((id) => {
    const a = found.find((f) => f.id === id);
    return a ? [attachmentView(a)] : [];
  });
}

/** The attachments of these messages, by message id, in upload order. */
export async function attachmentsOf(em: EntityManager, messageIds: readonly string[]): Promise<Map<string, AttachmentView[]>> {
  const byMessage = new Map<string, AttachmentView[]>();
  if (messageIds.length === 0) return byMessage;
  const found = await em.find(
    ConversationAttachment,
    { messageId: { $in: [...messageIds] } },
    { orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  for (const a of found) byMessage.set(a.messageId!, [...(byMessage.get(a.messageId!) ?? []), attachmentView(a)]);
  return byMessage;
}

export interface AttachmentFile {
  attachment: ConversationAttachment;
  /** The file's bytes in pieces, to be sent one after the other. */
  pieces: Buffer[];
  /** The name to download it under: the uploaded stem with the extension of its recognised kind. */
  downloadName: string;
}

async function openFile(em: EntityManager, box: SecretBox, attachment: ConversationAttachment): Promise<AttachmentFile> {
  const pieces = await readSealedFile(em, box, ATTACHMENT_FILES, attachment.id, `the file of attachment ${attachment.id}`);
  if (!pieces) throw errors.notFound('Attachment');
  return {
    attachment,
    pieces,
    downloadName: downloadName({ fileName: attachment.fileName, contentType: attachment.contentType }),
  };
}

/**
 * A customer's own attachment: one it uploaded, or one the desk sent it in a public message
 * (an attachment of an internal note is the desk's alone). Anything else is 404.
 */
export async function openCustomerAttachment(
  em: EntityManager,
  box: SecretBox,
  customerId: string,
  id: string,
): Promise<AttachmentFile> {
  const attachment = await em.findOne(ConversationAttachment, { id, customerId });
  if (!attachment) throw errors.notFound('Attachment');
  if (attachment.uploadedByType !== 'customer') {
    const message = attachment.messageId ? await em.findOne(ConversationMessage, attachment.messageId) : null;
    if (!message || message.internal) throw errors.notFound('Attachment');
  }
  return openFile(em, box, attachment);
}

/** An attachment of a message of this conversation (the caller has checked the conversation is in its scope). */
export async function openConversationAttachment(
  em: EntityManager,
  box: SecretBox,
  conversationId: string,
  id: string,
): Promise<AttachmentFile> {
  const attachment = await em.findOne(ConversationAttachment, { id, conversationId });
  if (!attachment) throw errors.notFound('Attachment');
  return openFile(em, box, attachment);
}
