/**
 * How far back a stream client may resume with Last-Event-ID: the
 * outbox must keep at least this much, or a resume inside the window would miss events.
 */
export const STREAM_RESUME_WINDOW_HOURS = 24;

/** How long the calls integrations made to us are kept, with their bodies. */
export const INBOUND_CALL_RETENTION_HOURS = 30 * 24;

/**
 * How long a sign-up waiting for its confirmation is kept after it was made: past its 24-hour
 * link, or once used (the customer then holds the password hash), it serves nothing but a
 * look at recent sign-ups.
 */
export const PENDING_REGISTRATION_RETENTION_HOURS = 7 * 24;

/** How long an uploaded conversation attachment waits for a message to take it before it is deleted. */
export const UNUSED_ATTACHMENT_RETENTION_HOURS = 24;

/** How long each kind of row is kept once nothing needs it any more, in hours. */
export interface RetentionAges {
  outboxHours: number;
  inboxHours: number;
  webhookDeliveryHours: number;
  mailHours: number;
  /** A finished report (and its file) is deleted this many days after it finished; at least 7. */
  reportDays: number;
}
