import { namedStatement } from '../../platform/named-sql';

/**
 * The mail outbox sweep's statements, with named parameters. Both claim rows with
 * SKIP LOCKED, so sweeps running in several workers never take the same mail.
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
 * Claims a queued mail just before its hand-off to the SMTP server (`queued` to `sending`,
 * attempts + 1), committed on its own: only recording the outcome leaves `sending`. Answers
 * no row when another run took it first.
 */
export const CLAIM_FOR_SENDING = namedStatement<{ mail_id: string }>(
  `update mail_messages set status = 'sending', attempts = attempts + 1, updated_at = now()
    where id = :mail_id and status = 'queued' returning attempts`,
);
