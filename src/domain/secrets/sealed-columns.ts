import type { EntityManager } from '@mikro-orm/postgresql';
import { UnsealError, type SecretBox } from '../../platform/secret-box';
import { executeBoundInTransaction, executeNamed } from '../../db/bound-statement';
import type { NamedStatement } from '../../platform/named-sql';
import {
  ATTACHMENT_FILES_TO_RESEAL,
  DOCUMENT_FILES_TO_RESEAL,
  RESEAL_ATTACHMENT_FILE,
  RESEAL_DOCUMENT_FILE,
} from './secrets.queries';

/** How sealedByKey names values of earlier releases, sealed under JWT_SECRET (no key id can look like it). */
export const LEGACY_KEY_LABEL = '(JWT_SECRET)';

/** What each kind of secret is sealed for: its own subkey, and the `purpose` label of the unseal metric. */
export const SECRET_PURPOSES = {
  mail: 'mail-secret-data',
  webhook: 'webhook-secret',
  totp: 'totp-secret',
  document: 'document-file',
  integration: 'integration-secret',
} as const;
export type SecretPurpose = (typeof SECRET_PURPOSES)[keyof typeof SECRET_PURPOSES];

/** The log line of every value that cannot be unsealed (at error, naming what and why, never the value). */
export const UNSEAL_FAILURE_LOG = 'a sealed secret could not be unsealed';

interface SealedColumn {
  table: string;
  column: string;
  purpose: SecretPurpose;
  /** Names a row's value in logs and errors: `${describe} ${id}`. */
  describe: string;
}

/**
 * Every text column that holds a sealed value. The re-seal job walks exactly these: a new one
 * must be listed. Documents' and attachments' files are bytes with their key id in a column of
 * their own: the job moves them too (SEALED_FILES), in small batches, since one file is up to 10 MiB.
 */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: 'webhooks', column: 'secret_sealed', purpose: SECRET_PURPOSES.webhook, describe: 'the signing secret of webhook' },
  {
    table: 'webhooks',
    column: 'previous_secret_sealed',
    purpose: SECRET_PURPOSES.webhook,
    describe: 'the previous signing secret of webhook',
  },
  {
    table: 'integrations',
    column: 'secret_sealed',
    purpose: SECRET_PURPOSES.integration,
    describe: 'the secrets of integration',
  },
  {
    table: 'integrations',
    column: 'previous_secret_sealed',
    purpose: SECRET_PURPOSES.integration,
    describe: 'the previous secrets of integration',
  },
  { table: 'staff_users', column: 'totp_secret', purpose: SECRET_PURPOSES.totp, describe: 'the TOTP seed of user' },
  {
    table: 'staff_users',
    column: 'totp_pending_secret',
    purpose: SECRET_PURPOSES.totp,
    describe: 'the pending TOTP seed of user',
  },
  { table: 'customers', column: 'totp_secret', purpose: SECRET_PURPOSES.totp, describe: 'the TOTP seed of customer' },
  {
    table: 'customers',
    column: 'totp_pending_secret',
    purpose: SECRET_PURPOSES.totp,
    describe: 'the pending TOTP seed of customer',
  },
  { table: 'mail_messages', column: 'secret_data', purpose: SECRET_PURPOSES.mail, describe: 'the secret values of mail' },
];

const BATCH = 200;

export interface ResealOutcome {
  key_id: string;
  /** Values moved to the current key, per `table.column`. */
  moved: Record<string, number>;
  failed: number;
  /** After the run: how many values each key id still seals (LEGACY_KEY_LABEL: values of earlier releases). */
  sealed_by_key: Record<string, number>;
}

/**
 * Moves every sealed value not under the current key to it: open, seal again, and write it
 * only if the row still holds what was read (a value changed meanwhile was sealed under the
 * current key by whoever changed it). Idempotent: a second run finds nothing to move. A value
 * that cannot be opened is reported by the box (log line and metric), skipped, and makes the
 * run fail once the rest is done, naming the first. `updated_at` is left alone: the secret
 * did not change, and the mail relay reads it as "last touched".
 */
export async function resealAll(em: EntityManager, boxes: Record<SecretPurpose, SecretBox>): Promise<ResealOutcome> {
  const moved: Record<string, number> = {};
  const failures: UnsealError[] = [];
  const keyId = boxes[SECRET_PURPOSES.webhook].currentKeyId;
  for (const c of SEALED_COLUMNS) {
    const box = boxes[c.purpose];
    const prefix = box.currentPrefix;
    const name = `${c.table}.${c.column}`;
    moved[name] = 0;
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const rows = await em.execute<Array<{ id: string; sealed: string }>>(
        `select id, "${c.column}" as sealed from "${c.table}"
          where "${c.column}" is not null and left("${c.column}", ?) <> ? and id > ? order by id limit ?`,
        [prefix.length, prefix, after, BATCH],
      );
      for (const row of rows) {
        let plain: string;
        try {
          plain = box.open(row.sealed, `${c.describe} ${row.id}`);
        } catch (err) {
          if (!(err instanceof UnsealError)) throw err;
          failures.push(err);
          continue;
        }
        const result = await em.execute(
          `update "${c.table}" set "${c.column}" = ? where id = ? and "${c.column}" = ?`,
          [box.seal(plain), row.id, row.sealed],
          'run',
        );
        moved[name] += (result as { affectedRows?: number }).affectedRows ?? 0;
      }
      if (rows.length < BATCH) break;
      after = rows[rows.length - 1]!.id;
    }
  }
  for (const files of SEALED_FILES)
    moved[`${files.table}.content`] = await resealFiles(em, boxes[SECRET_PURPOSES.document], files, failures);
  const first = failures[0];
  if (first) {
    const what = failures.length === 1 ? first.subject : `${failures.length} sealed values (the first: ${first.subject})`;
    throw new UnsealError(first.purpose, what, first.reason, first.keyId);
  }
  return { key_id: keyId, moved, failed: failures.length, sealed_by_key: await sealedByKey(em) };
}

/** Files per batch: up to 10 MiB each, so a batch holds at most about 100 MiB sealed and opened. */
const DOCUMENT_BATCH = 5;

interface SealedFiles {
  table: string;
  /** Names a row's file in logs and errors: `${describe} ${id}`. */
  describe: string;
  toReseal: NamedStatement<{ current: string; after: string; limit: number }>;
  reseal: NamedStatement<{ id: string; key_id: string; content: Buffer; old_key_id: string }>;
}

/**
 * Every table of sealed files (bytes under the documents' subkey, each sealed with its row's
 * id as context, its key id in a column of its own). The re-seal job walks exactly these: a
 * new one must be listed.
 */
export const SEALED_FILES: readonly SealedFiles[] = [
  {
    table: 'customer_document_files',
    describe: 'the file of document',
    toReseal: DOCUMENT_FILES_TO_RESEAL,
    reseal: RESEAL_DOCUMENT_FILE,
  },
  {
    table: 'conversation_attachment_files',
    describe: 'the file of attachment',
    toReseal: ATTACHMENT_FILES_TO_RESEAL,
    reseal: RESEAL_ATTACHMENT_FILE,
  },
];

/**
 * Moves every file of one table not under the current key to it, as resealAll does for text
 * values: written only if the row still holds what was read.
 */
async function resealFiles(em: EntityManager, box: SecretBox, files: SealedFiles, failures: UnsealError[]): Promise<number> {
  let moved = 0;
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const rows = await executeNamed<{ id: string; key_id: string; content: Buffer }>(
      em,
      files.toReseal.bind({ current: box.currentKeyId, after, limit: DOCUMENT_BATCH }),
    );
    for (const row of rows) {
      let plain: Buffer;
      try {
        plain = await box.openBytes(row.content, row.key_id, row.id, `${files.describe} ${row.id}`);
      } catch (err) {
        if (!(err instanceof UnsealError)) throw err;
        failures.push(err);
        continue;
      }
      const { keyId, sealed } = await box.sealBytes(plain, row.id);
      const done = await em.transactional((tx) =>
        executeBoundInTransaction<{ id: string }>(
          tx,
          files.reseal.bind({ id: row.id, key_id: keyId, content: sealed, old_key_id: row.key_id }),
        ),
      );
      moved += done.length;
    }
    if (rows.length < DOCUMENT_BATCH) break;
    after = rows[rows.length - 1]!.id;
  }
  return moved;
}

/** How many stored values each key id seals, over every sealed column: when an old id reaches 0 it may be removed. */
export async function sealedByKey(em: EntityManager): Promise<Record<string, number>> {
  const unions = SEALED_COLUMNS.map(
    (c) =>
      `select case when left("${c.column}", 3) = 'v2:' then split_part("${c.column}", ':', 2) else '${LEGACY_KEY_LABEL}' end as key_id
         from "${c.table}" where "${c.column}" is not null`,
  )
    .concat(SEALED_FILES.map((f) => `select key_id from ${f.table}`))
    .join(' union all ');
  const rows = await em.execute<Array<{ key_id: string; n: number }>>(
    `select key_id, count(*)::int as n from (${unions}) s group by key_id order by key_id`,
  );
  return Object.fromEntries(rows.map((r) => [r.key_id, r.n]));
}
