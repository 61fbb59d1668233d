import type { EntityManager } from '@mikro-orm/postgresql';
import { executeBound } from '../../db/bound-statement';
import type { MailStatus } from '../../entities/mail-message.entity';
import { MailSendError, type MailTransport } from '../../mail/mail-transport';
import { PermanentJobFailure } from '../../platform/errors';
import { UnsealError, type SecretBox } from '../../platform/secret-box';
import { CLAIM_MAIL_BATCH, RECORD_MAIL_BATCH } from './mail.queries';
import { MailTemplateError, type MailRenderer, type RenderBatch, type RenderedMail } from './renderer';

export const UNKNOWN_OUTCOME =
  'the worker stopped while sending: the server may have the mail, so it is not sent again (at most once)';

/** Rows one send run claims: its own and up to this many less one fresh rows, sent together over the pool. */
export const MAIL_BATCH_SIZE = 50;

export interface MailSending {
  secrets: SecretBox;
  renderer: MailRenderer;
  transport: MailTransport;
  from: string;
  /** Tries over a row's whole life, across the send jobs the relay re-adds: a mail that keeps failing ends. */
  maxAttempts: number;
  /** The first retry's delay; each later one doubles it (the send job's backoff). */
  backoffMs: number;
  batchSize: number;
  /**
   * Gives a batch-mate whose send failed for now its own retry after `delayMs` (its send job
   * again). Its row is already back to `queued`, so a failure here only delays it until the
   * outbox relay re-adds the job.
   */
  retryLater(mailId: string, delayMs: number): Promise<void>;
}

export interface MailRun {
  /** The row this run's job is for. */
  mailId: string;
  /** The run's id, written on every row it claims (the job id: the same across the job's retries). */
  claim: string;
  /** True when a temporary failure of the run's own row now is final. */
  isLastAttempt: boolean;
}

/** What the run did with its own row; `claimed`, `sent`, `lost`: how many rows of the batch. */
export interface MailSendOutcome {
  status?: MailStatus;
  skipped?: true;
  claimed: number;
  sent: number;
  lost: number;
}

interface ClaimedRow {
  id: string;
  template: string;
  locale: string;
  to_address: string;
  data: Record<string, unknown>;
  secret_data: string | null;
  attempts: number;
  lost: boolean;
}

interface Outcome {
  id: string;
  status: 'sent' | 'logged' | 'failed' | 'queued';
  attempts: number;
  last_error: string | null;
  provider_message_id: string | null;
  sent_at: string | null;
  subject: string | null;
  /** Kept out of the record: why the run's own row failed, to end the job the same way. */
  error?: unknown;
}

/**
 * Sends a batch of mail rows and records them, each handed to the SMTP server at most once.
 * - One statement claims the run's own row (when `queued`) and up to `batchSize - 1` rows no
 *   run has tried yet (`queued` to `sending`, attempts + 1, `claimed_by` = the run), committed
 *   before any hand-off; only the record leaves `sending`. Another run's job finds its row
 *   claimed and sends nothing for it, so a job that runs twice, or a job whose row a batch
 *   took, does not mail twice.
 * - A run that died between the hand-off and the record left its rows `sending` under its id;
 *   its job's retry after the stall marks them `unknown` in the same claim and sends none of
 *   them (the server may have them). Rows whose job is lost too are the relay's sweep's
 *   (SENDING_ORPHAN_SECONDS).
 * - The rows are rendered (each template read once per batch) and sent concurrently over the
 *   pooled transport; one statement records every outcome.
 * - A temporary failure (4xx, refused connection, timeout) puts the row back to `queued`: the
 *   run's own row by throwing, so its job retries with exponential backoff; a batch-mate by
 *   re-adding its job with the same backoff. A permanent one (5xx), a template that cannot
 *   render, or secrets no configured key opens, are `failed` at once; so is the own row on
 *   its job's last attempt, or any row after `maxAttempts` over its life. The run's own row
 *   ending `failed` throws PermanentJobFailure: no retry follows.
 * Once a mail is final its secrets are erased; the subject is kept only when no secret value
 * appears in it.
 */
export async function sendMailBatch(em: EntityManager, sending: MailSending, run: MailRun): Promise<MailSendOutcome> {
  const rows = await executeBound<ClaimedRow>(
    em,
    CLAIM_MAIL_BATCH.bind({ claim: run.claim, mail_id: run.mailId, more: sending.batchSize - 1, lost_reason: UNKNOWN_OUTCOME }),
  );
  const lost = rows.filter((r) => r.lost);
  const claimed = rows.filter((r) => !r.lost);
  const templates: RenderBatch = new Map();
  const outcomes = await Promise.all(claimed.map((row) => sendOne(em, sending, row, templates, run)));
  if (outcomes.length) {
    const record = outcomes.map(({ error: _error, ...o }) => o);
    await executeBound(em, RECORD_MAIL_BATCH.bind({ claim: run.claim, outcomes: JSON.stringify(record) }));
  }
  // Batch-mates to try again: their rows are committed `queued`, so a lost re-add only waits for the relay.
  await Promise.all(
    outcomes
      .filter((o) => o.status === 'queued' && o.id !== run.mailId)
      .map((o) => sending.retryLater(o.id, sending.backoffMs * 2 ** (o.attempts - 1)).catch(() => undefined)),
  );

  const counts = {
    claimed: claimed.length,
    sent: outcomes.filter((o) => o.status === 'sent' || o.status === 'logged').length,
    lost: lost.length,
  };
  const own = outcomes.find((o) => o.id === run.mailId);
  if (!own) return lost.some((r) => r.id === run.mailId) ? { status: 'unknown', ...counts } : { skipped: true, ...counts };
  if (own.status === 'failed') throw new PermanentJobFailure(own.last_error ?? 'failed');
  if (own.status === 'queued') throw own.error;
  return { status: own.status, ...counts };
}

/** Renders, sends and decides one claimed row; never throws for the row's own sake. */
async function sendOne(
  em: EntityManager,
  sending: MailSending,
  row: ClaimedRow,
  templates: RenderBatch,
  run: MailRun,
): Promise<Outcome> {
  const outcome = { id: row.id, attempts: row.attempts, provider_message_id: null, sent_at: null, subject: null };
  const failed = (reason: string, attempts = row.attempts): Outcome => ({
    ...outcome,
    attempts,
    status: 'failed',
    last_error: reason,
  });
  // Claimed past the bound: nothing was handed over, so the claim does not count as a try.
  if (row.attempts > sending.maxAttempts) return failed(`gave up after ${sending.maxAttempts} attempts`, row.attempts - 1);

  let secrets: Record<string, string>;
  let rendered: RenderedMail;
  try {
    secrets = row.secret_data
      ? (JSON.parse(sending.secrets.open(row.secret_data, `the secret values of mail ${row.id}`)) as Record<string, string>)
      : {};
    rendered = await sending.renderer.render(
      em,
      { template: row.template, locale: row.locale, data: row.data, secrets },
      templates,
    );
  } catch (err) {
    // Retrying cannot make a template appear or a sealed value open under a key this process lacks.
    if (err instanceof MailTemplateError) return failed(err.message);
    if (err instanceof UnsealError) return failed(`${err.name}: ${err.message}`);
    return { ...outcome, status: 'queued', last_error: err instanceof Error ? err.message : String(err), error: err };
  }

  try {
    const result = await sending.transport.send({
      from: sending.from,
      to: row.to_address,
      subject: rendered.subject,
      text: rendered.text,
      html: rendered.html,
      messageId: `<${row.id}@trading-api>`,
    });
    return {
      ...outcome,
      status: result.outcome,
      last_error: null,
      provider_message_id: result.providerMessageId,
      sent_at: new Date().toISOString(),
      subject: Object.values(secrets).some((v) => rendered.subject.includes(v)) ? null : rendered.subject,
    };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof MailSendError && err.permanent) return failed(message);
    const last = row.attempts >= sending.maxAttempts || (row.id === run.mailId && run.isLastAttempt);
    if (last) return failed(message);
    // Not handed over: the row may be tried again.
    return { ...outcome, status: 'queued', last_error: message, error: err };
  }
}
