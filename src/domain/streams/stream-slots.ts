import type { RedisClient } from '../../platform/redis';

/** Open streams one session (or API token) may hold at once, across every API process. */
export const MAX_STREAMS_PER_SESSION = 5;
/**
 * Open streams one principal (a customer, a staff user, an API token) may hold across all its
 * sessions: logging in again must not multiply what one client can hold open.
 */
export const MAX_STREAMS_PER_PRINCIPAL = 10;
/** A slot not refreshed for this long belongs to a process that died: it no longer counts. */
export const SLOT_LEASE_SECONDS = 45;

/**
 * KEYS: the session's set, the principal's set; ARGV: stream id, now (ms), lease (ms), session
 * limit, principal limit. 1 when taken in both, 0 when the session is full, -1 when the principal is.
 */
const TAKE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return -1 end
for i = 1, 2 do
  redis.call('ZADD', KEYS[i], tonumber(ARGV[2]) + tonumber(ARGV[3]), ARGV[1])
  redis.call('PEXPIRE', KEYS[i], ARGV[3])
end
return 1`;

/** Whom a stream counts against: its session (or API token) and its principal. */
export interface StreamHolder {
  session: string;
  principal: string;
}

export type TakeOutcome = 'taken' | 'session_full' | 'principal_full';

/**
 * The per-session and per-principal stream limits, counted in Redis so that streams opened
 * through different API processes count together: a sorted set of each session's and each
 * principal's open streams scored by lease end.
 * A process refreshes its streams' leases while they are open and removes them when they end;
 * a crashed process's leases lapse on their own.
 */
export class StreamSlots {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private key(holder: string): string {
    return `${this.prefix}:stream-slots:${holder}`;
  }

  async take(holder: StreamHolder, streamId: string): Promise<TakeOutcome> {
    const taken = Number(
      await this.redis.eval(
        TAKE,
        2,
        this.key(holder.session),
        this.key(holder.principal),
        streamId,
        String(Date.now()),
        String(SLOT_LEASE_SECONDS * 1000),
        String(MAX_STREAMS_PER_SESSION),
        String(MAX_STREAMS_PER_PRINCIPAL),
      ),
    );
    return taken === 1 ? 'taken' : taken === 0 ? 'session_full' : 'principal_full';
  }

  async refresh(slots: ReadonlyArray<{ holder: StreamHolder; streamId: string }>): Promise<void> {
    if (slots.length === 0) return;
    const until = Date.now() + SLOT_LEASE_SECONDS * 1000;
    const multi = this.redis.multi();
    for (const s of slots) {
      for (const key of [this.key(s.holder.session), this.key(s.holder.principal)]) {
        multi.zadd(key, 'XX', until, s.streamId);
        multi.pexpire(key, SLOT_LEASE_SECONDS * 1000);
      }
    }
    await multi.exec();
  }

  async release(holder: StreamHolder, streamId: string): Promise<void> {
    await this.redis.multi().zrem(this.key(holder.session), streamId).zrem(this.key(holder.principal), streamId).exec();
  }
}
