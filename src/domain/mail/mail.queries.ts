import { namedStatement } from '../../platform/named-sql';

/**
 * The mail outbox's statements, with named parameters: the relay's sweep, a send run's claim
 * and its record. Every claim takes rows with SKIP LOCKED, so sweeps and send runs in several
 * workers never take the same mail.
 */

/**
 * Mails left in `sending` by a worker that stopped: the server may have them, so they are
 * marked `unknown` and never sent again (at most once), and their secrets are dropped.
 */
export const MARK_SENDING_ORPHANS = namedStatement<{ after_seconds: number; limit: number }>(
  `update mail_messages set status = 'unknown', secret_data = null, updated_at = now(),
          last_error = 'the worker stopped while sending: the server may have the mail, so it is not sent again (at most once)'
    where id in (select id from mail_messages
                  where status = 'sending' and updated_at < now() - :after_seconds * interval '1 second'
                  order by updated_at limit :limit for update skip locked)
    returning id`,
);

/** Mails queued long enough that their job may be lost: touched, so the next sweep skips them for a while. */
export const TOUCH_STALE_QUEUED = namedStatement<{ after_seconds: number; limit: number }>(
  `update mail_messages set updated_at = now()
    where id in (select id from mail_messages
                  where status = 'queued' and updated_at < now() - :after_seconds * interval '1 second'
                  order by updated_at limit :limit for update skip locked)
    returning id`,
);

/**
 * One send run's claim, in one statement committed on its own before any hand-off:
 * - rows still `sending` under this run's id were left by its own earlier attempt, which died
 *   between the hand-off and the record: they become `unknown` (never sent again) and come
 *   back with `lost` set;
 * - the run's own row, when `queued`, and up to `more` other `queued` rows never tried yet
 *   (`attempts = 0`: a row that failed once is retried only by its own job, after its backoff)
 *   become `sending` under this run's id, attempts + 1. SKIP LOCKED: racing runs take
 *   different rows, and a row claimed by one run is no longer `queued` for the next.
 */
export const CLAIM_MAIL_BATCH = namedStatement<{ claim: string; mail_id: string; more: number; lost_reason: string }>(
  `with lost as (
     update mail_messages set status = 'unknown', secret_data = null, last_error = :lost_reason, updated_at = now()
      where claimed_by = :claim and status = 'sending'
      returning id
   ), own as (
     select id from mail_messages where id = :mail_id and status = 'queued' for update skip locked
   ), fresh as (
     select id from mail_messages
      where status = 'queued' and attempts = 0 and id <> :mail_id
      order by updated_at limit :more for update skip locked
   ), claimed as (
     update mail_messages m set status = 'sending', attempts = m.attempts + 1, claimed_by = :claim, updated_at = now()
      where m.id in (select id from own union all select id from fresh)
      returning m.id, m.template, m.locale, m.to_address, m.data, m.secret_data, m.attempts
   )
   select id, template, locale, to_address, data, secret_data, attempts, false as lost from claimed
   union all
   select id, null, null, null, null, null, null, true from lost`,
);

/**
 * Records the outcomes of one claim in one statement (`outcomes`: a JSON array of
 * {id, status, attempts, last_error, provider_message_id, sent_at, subject}). Only rows still
 * `sending` under the claim are written: a row the orphan sweep marked `unknown` meanwhile
 * stays so. Secrets go once a row is final; a row put back to `queued` keeps them for its retry.
 */
export const RECORD_MAIL_BATCH = namedStatement<{ claim: string; outcomes: string }>(
  `update mail_messages m
      set status = r.status,
          attempts = r.attempts,
          last_error = r.last_error,
          provider_message_id = coalesce(r.provider_message_id, m.provider_message_id),
          sent_at = coalesce(r.sent_at, m.sent_at),
          subject = case when r.status in ('sent', 'logged') then r.subject else m.subject end,
          secret_data = case when r.status = 'queued' then m.secret_data end,
          updated_at = now()
     from jsonb_to_recordset(cast(:outcomes as jsonb))
          as r(id uuid, status text, attempts int, last_error text, provider_message_id text, sent_at timestamptz, subject text)
    where m.id = r.id and m.status = 'sending' and m.claimed_by = :claim
   returning m.id`,
);
