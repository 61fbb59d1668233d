import type { EntityManager } from '@mikro-orm/postgresql';
import { executeBoundInTransaction, executeNamed } from '../../db/bound-statement';
import type { NamedStatement } from '../../platform/named-sql';
import type { SecretBox } from '../../platform/secret-box';

/**
 * Files kept sealed in Postgres (documents, conversation attachments): one row per file, its
 * bytes sealed under the documents' subkey with the file's id as context and the key id beside
 * them. Each kind of file names its table through these four statements; how the bytes are
 * written and read is the same for all, and keeps every turn of the event loop short.
 */
export interface SealedFileStatements {
  insert: NamedStatement<{ id: string; key_id: string; content: Buffer }>;
  /** Appends the next piece of a file being stored. */
  append: NamedStatement<{ id: string; piece: Buffer }>;
  /** The file's key id and sealed size (`key_id`, `size`). */
  meta: NamedStatement<{ id: string }>;
  /** `count` bytes of the sealed file from byte `from` (1-based, as substring counts), as `piece`. */
  piece: NamedStatement<{ id: string; from: number; count: number }>;
}

const FILE_PIECE_BYTES = 1024 * 1024;
const STORE_PIECE_BYTES = 4 * 1024 * 1024;

/**
 * Seals and writes a file in the caller's transaction, in pieces: the driver copies a parameter
 * into its message in one go, which for a 10 MiB file holds the event loop for 20 to 40 ms; a
 * few pieces keep each turn short, for a few more megabytes rewritten by Postgres.
 */
export async function writeSealedFile(
  tx: EntityManager,
  box: SecretBox,
  statements: SealedFileStatements,
  id: string,
  bytes: Buffer,
): Promise<void> {
  const { keyId, sealed } = await box.sealBytes(bytes, id);
  const pieces = Math.ceil(sealed.length / STORE_PIECE_BYTES);
  await executeBoundInTransaction(
    tx,
    statements.insert.bind({ id, key_id: keyId, content: sealed.subarray(0, STORE_PIECE_BYTES) }),
  );
  for (let i = 1; i < pieces; i += 1) {
    const piece = sealed.subarray(i * STORE_PIECE_BYTES, (i + 1) * STORE_PIECE_BYTES);
    await executeBoundInTransaction(tx, statements.append.bind({ id, piece }));
  }
}

/**
 * A file's bytes, opened, in pieces (send them one after the other), or undefined when it has
 * no row. Read a mebibyte at a time: the driver receives bytea as hex text and decodes a whole
 * row in one go, which for a 10 MiB file holds the event loop for about 50 ms; and never joined
 * into one buffer, a copy of the whole file in one turn. A file that cannot be opened fails
 * loudly (UnsealError).
 */
export async function readSealedFile(
  em: EntityManager,
  box: SecretBox,
  statements: SealedFileStatements,
  id: string,
  subject: string,
): Promise<Buffer[] | undefined> {
  const [row] = await executeNamed<{ key_id: string; size: number }>(em, statements.meta.bind({ id }));
  if (!row) return undefined;
  const pieces: Buffer[] = [];
  for (let from = 1; from <= row.size; from += FILE_PIECE_BYTES) {
    const [part] = await executeNamed<{ piece: Buffer }>(em, statements.piece.bind({ id, from, count: FILE_PIECE_BYTES }));
    if (!part) return undefined;
    pieces.push(part.piece);
  }
  return box.openPieces(pieces, row.key_id, id, subject);
}
