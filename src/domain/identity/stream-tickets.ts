import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../../platform/redis';

/** A ticket's lifetime: long enough to open an EventSource after asking, short enough to be useless once leaked. */
export const STREAM_TICKET_TTL_SECONDS = 30;

/** Whose session a ticket stands for; the session is checked again when the ticket is used. */
export interface TicketHolder {
  type: 'user' | 'customer';
  sub: string;
  sid: string;
  /**
   * A dashboard session (its cookie is its credential, it has no access token): the staff
   * member's permissions when the ticket was issued. The session's revocation still counts.
   */
  dashboard?: { permissions: string[] };
}

/**
 * Stream tickets: a browser's EventSource cannot send an Authorization header, so a logged-in
 * caller trades its token for a ticket that opens one stream as `?ticket=`. Only a hash of the
 * ticket is a key in Redis, and GETDEL takes it, so it works once, from any API process.
 */
export class StreamTickets {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private key(ticket: string): string {
    return `${this.prefix}:stream-ticket:${ticket}`;
  }

  async issue(holder: TicketHolder): Promise<{ ticket: string; expires_in: number }> {
    const ticket = `st_${randomBytes(24).toString('base64url')}`;
    await this.redis.set(this.key(ticket), JSON.stringify(holder), 'EX', STREAM_TICKET_TTL_SECONDS);
    return { ticket, expires_in: STREAM_TICKET_TTL_SECONDS };
  }

  /** The holder, once; undefined for an unknown, expired or already used ticket. */
  async redeem(ticket: string): Promise<TicketHolder | undefined> {
    if (!/^st_[A-Za-z0-9_-]{32}$/.test(ticket)) return undefined;
    const raw = await this.redis.getdel(this.key(ticket));
    return raw ? (JSON.parse(raw) as TicketHolder) : undefined;
  }
}
