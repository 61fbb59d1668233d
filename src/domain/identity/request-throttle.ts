import type { RedisClient } from '../../platform/redis';
import { errors } from '../../platform/errors';

/**
 * KEYS: the counters; ARGV: the window in seconds, then each counter's limit. Refuses with the
 * longest wait when any counter is spent (counting nothing), else counts the request in all.
 */
const TAKE = `
local window = tonumber(ARGV[1])
local wait = 0
for i = 1, #KEYS do
  if tonumber(redis.call('GET', KEYS[i]) or '0') >= tonumber(ARGV[i + 1]) then
    local ttl = redis.call('TTL', KEYS[i])
    if ttl <= 0 then ttl = window end
    if ttl > wait then wait = ttl end
  end
end
if wait > 0 then return wait end
for i = 1, #KEYS do
  redis.call('INCR', KEYS[i])
  redis.call('EXPIRE', KEYS[i], window, 'NX')
end
return 0`;

/**
 * Fixed-window request limits over several keys at once (say per email from an address and per address),
 * counted in one Redis script so parallel requests cannot slip past a limit. Every request is
 * counted, whatever its outcome: for password resets the count must not depend on whether the
 * email belongs to anyone, or a 429 would tell.
 */
export class RequestThrottle {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly name: string,
    private readonly windowSeconds: number,
  ) {}

  /** Throws 429 RATE_LIMITED with Retry-After when any of `limits` is spent; otherwise counts the request. */
  async take(limits: Array<{ key: string; limit: number }>): Promise<void> {
    const keys = limits.map((l) => `${this.prefix}:throttle:${this.name}:${l.key}`);
    const wait = Number(await this.redis.eval(TAKE, keys.length, ...keys, this.windowSeconds, ...limits.map((l) => l.limit)));
    if (wait > 0) throw errors.rateLimited(wait);
  }
}
