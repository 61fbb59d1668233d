import type { RedisClient } from '../../platform/redis';

/** Open streams one session (or API token) may hold at once, across every API process. */
export const MAX_STREAMS_PER_SESSION = 5;
/** A slot not refreshed for this long belongs to a process that died: it no longer counts. */
export const SLOT_LEASE_SECONDS = 45;

/** KEYS: the session's set; ARGV: stream id, now (ms), lease (ms), limit. 1 when taken, 0 when full. */
const TAKE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

/**
 * The per-session stream limit, counted in Redis so that streams opened through different API
 * processes count together: a sorted set of the session's open streams scored by lease end.
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

  async take(holder: string, streamId: string): Promise<boolean> {
    const taken = await this.redis.eval(
      TAKE,
      1,
      this.key(holder),
      streamId,
      String(Date.now()),
      String(SLOT_LEASE_SECONDS * 1000),
      String(MAX_STREAMS_PER_SESSION),
    );
    return Number(taken) === 1;
  }

  async refresh(slots: ReadonlyArray<{ holder: string; streamId: string }>): Promise<void> {
    if (slots.length === 0) return;
    const until = Date.now() + SLOT_LEASE_SECONDS * 1000;
    const multi = this.redis.multi();
    for (const s of slots) {
      multi.zadd(this.key(s.holder), 'XX', until, s.streamId);
      multi.pexpire(this.key(s.holder), SLOT_LEASE_SECONDS * 1000);
    }
    await multi.exec();
  }

  async release(holder: string, streamId: string): Promise<void> {
    await this.redis.zrem(this.key(holder), streamId);
  }
}
