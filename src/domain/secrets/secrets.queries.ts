import { namedStatement } from '../../platform/named-sql';

/** The first process to start creates the development key; the others find it there. */
export const CREATE_DEVELOPMENT_KEY = namedStatement<{ id: string; key: string }>(
  `insert into development_data_keys (id, key, created_at) values (:id, :key, now()) on conflict (id) do nothing`,
);

export const READ_DEVELOPMENT_KEY = namedStatement<{ id: string }>(`select key from development_data_keys where id = :id`);

/** A page of document files sealed under another key than the current one, in id order. */
export const DOCUMENT_FILES_TO_RESEAL = namedStatement<{ current: string; after: string; limit: number }>(
  `select document_id as id, key_id, content from customer_document_files
    where key_id <> :current and document_id > :after order by document_id limit :limit`,
);

/** Writes a re-sealed file only if the row still holds the key it was read under. */
export const RESEAL_DOCUMENT_FILE = namedStatement<{ id: string; key_id: string; content: Buffer; old_key_id: string }>(
  `update customer_document_files set key_id = :key_id, content = :content
    where document_id = :id and key_id = :old_key_id returning document_id as id`,
);

/** A page of conversation attachment files sealed under another key than the current one, in id order. */
export const ATTACHMENT_FILES_TO_RESEAL = namedStatement<{ current: string; after: string; limit: number }>(
  `select attachment_id as id, key_id, content from conversation_attachment_files
    where key_id <> :current and attachment_id > :after order by attachment_id limit :limit`,
);

export const RESEAL_ATTACHMENT_FILE = namedStatement<{ id: string; key_id: string; content: Buffer; old_key_id: string }>(
  `update conversation_attachment_files set key_id = :key_id, content = :content
    where attachment_id = :id and key_id = :old_key_id returning attachment_id as id`,
);
