import { namedStatement } from '../../platform/named-sql';

/** An attachment's sealed bytes (the first piece), written in the transaction that writes its metadata. */
export const INSERT_ATTACHMENT_FILE = namedStatement<{ id: string; key_id: string; content: Buffer }>(
  `insert into conversation_attachment_files (attachment_id, key_id, content) values (:id, :key_id, :content)`,
);

export const APPEND_ATTACHMENT_FILE = namedStatement<{ id: string; piece: Buffer }>(
  `update conversation_attachment_files set content = content || :piece where attachment_id = :id`,
);

export const READ_ATTACHMENT_FILE = namedStatement<{ id: string }>(
  `select key_id, octet_length(content) as size from conversation_attachment_files where attachment_id = :id`,
);

export const READ_ATTACHMENT_FILE_PIECE = namedStatement<{ id: string; from: number; count: number }>(
  `select substring(content from :from for :count) as piece from conversation_attachment_files where attachment_id = :id`,
);

/**
 * A message takes the customer's free attachments it names, each once: an attachment of
 * another customer, or one a message already took, is not among the rows returned.
 */
export const TAKE_ATTACHMENTS = namedStatement<{
  ids: string;
  customer_id: string;
  message_id: string;
  conversation_id: string;
  uploaded_by_type: string;
}>(
  `update conversation_attachments set message_id = :message_id::uuid, conversation_id = :conversation_id::uuid, updated_at = now()
    where id = any(:ids::uuid[]) and customer_id = :customer_id::uuid and message_id is null
      and uploaded_by_type = :uploaded_by_type
    returning id`,
);
