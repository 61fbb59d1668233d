import { namedStatement } from '../../platform/named-sql';

/** The customer's level and what that level allows, read in the caller's transaction. */
export const CUSTOMER_LEVEL_TERMS = namedStatement<{ customer_id: string }>(
  `select c.verification_level as level, l.can_trade, l.can_withdraw,
          l.max_deposit_per_day::text as max_deposit_per_day,
          l.max_withdrawal_per_day::text as max_withdrawal_per_day,
          l.max_withdrawal_per_month::text as max_withdrawal_per_month
     from customers c join verification_levels l on l.level = c.verification_level
    where c.id = :customer_id`,
);

/** The customer's level alone: the trading check, when some level refuses trading. */
export const CUSTOMER_LEVEL = namedStatement<{ customer_id: string }>(
  `select verification_level as level from customers where id = :customer_id`,
);

/** The customer's row, locked: decisions on its documents and changes of its level take turns. */
export const LOCK_CUSTOMER_LEVEL = namedStatement<{ customer_id: string }>(
  `select verification_level as level from customers where id = :customer_id for update`,
);

export const SET_CUSTOMER_LEVEL = namedStatement<{ customer_id: string; level: number }>(
  `update customers set verification_level = :level, updated_at = now() where id = :customer_id`,
);

/**
 * Serialises the limit checks of one customer's deposits (which may go to several accounts,
 * each locked on its own): taken after the account's lock, and only by deposits, so no lock
 * order can cross it.
 */
export const LOCK_CUSTOMER_DEPOSITS = namedStatement<{ key: string }>(`select pg_advisory_xact_lock(hashtextextended(:key, 0))`);

/**
 * Withdrawals that count against a limit: pending and completed ones (a rejected one moved
 * nothing), in the wallet's currency, since the start of the period.
 */
export const WITHDRAWN_SINCE = namedStatement<{ customer_id: string; currency: string; since: Date }>(
  `select coalesce(sum(amount), 0)::text as total from withdrawals
    where customer_id = :customer_id and currency = :currency and status in ('pending', 'completed')
      and created_at >= :since`,
);

/** The types of the customer's approved documents. */
export const APPROVED_TYPES = namedStatement<{ customer_id: string }>(
  `select distinct type from customer_documents where customer_id = :customer_id and status = 'approved'`,
);

export const INSERT_DOCUMENT_FILE = namedStatement<{ id: string; key_id: string; content: Buffer }>(
  `insert into customer_document_files (document_id, key_id, content) values (:id, :key_id, :content)`,
);

/** Appends the next piece of a sealed file being stored (see storeDocument). */
export const APPEND_DOCUMENT_FILE = namedStatement<{ id: string; piece: Buffer }>(
  `update customer_document_files set content = content || :piece where document_id = :id`,
);

/** A sealed file's key and size: its bytes are read a piece at a time (READ_DOCUMENT_FILE_PIECE). */
export const READ_DOCUMENT_FILE = namedStatement<{ id: string }>(
  `select key_id, octet_length(content) as size from customer_document_files where document_id = :id`,
);

/** `count` bytes of a sealed file from byte `from` (1-based, as substring counts). */
export const READ_DOCUMENT_FILE_PIECE = namedStatement<{ id: string; from: number; count: number }>(
  `select substring(content from :from for :count) as piece from customer_document_files where document_id = :id`,
);

/** Every level's terms, in level order. */
export const LIST_LEVELS = namedStatement<Record<string, never>>(
  `select level, required_documents, can_trade, can_withdraw,
          max_deposit_per_day::text as max_deposit_per_day,
          max_withdrawal_per_day::text as max_withdrawal_per_day,
          max_withdrawal_per_month::text as max_withdrawal_per_month, updated_at
     from verification_levels order by level`,
);
