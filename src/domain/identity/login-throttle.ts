import type { RedisClient } from '../../platform/redis';
import { errors } from '../../platform/errors';

/**
 * Failed-login throttling, in Redis fixed windows of 15 minutes:
 * - per account and client address: 5 failures, then that address waits out the window;
 * - per client address: 30 failures across all accounts (credential stuffing);
 * - per account from everywhere: 100 failures, a backstop against distributed guessing.
 * The last two do not apply to an account at an address it has logged in from in the last
 * 90 days. What holds: a stranger elsewhere can never lock the owner out of the owner's
 * known addresses; only 5 failures for this very account from that very address can (a
 * stranger behind the owner's own NAT), for the rest of the 15-minute window. A new address
 * of the owner's waits at most 15 minutes during a distributed attack. A successful login
 * clears the account-and-address counter. The address is the socket's, or X-Forwarded-For
 * only through proxies TRUST_PROXY names (client-address.ts), so it cannot be forged.
 *
 * An attempt is counted as a failure before the password is checked and given back when it
 * turns out not to be one. Counting only after the check let parallel guesses all pass the
 * check before the first failure was counted (30 parallel guesses: 25 were tried, not 5).
 */
const WINDOW_SECONDS = 15 * 60;
const KNOWN_ADDRESS_SECONDS = 90 * 24 * 3600;
const LIMITS = { pair: 5, address: 30, account: 100 } as const;

/**
 * KEYS: the pair, address and account counters, then the account's known addresses;
 * ARGV: the three limits, the window, the address. Refuses with the longest wait when any
 * counter is spent (counting nothing), else counts the attempt in all three. At an address
 * the account has logged in from before, only the pair counter can refuse: neither strangers
 * failing on other accounts from the owner's address (a shared NAT) nor a distributed attack
 * on the account from elsewhere locks the owner out there.
 */
const TAKE_ATTEMPT = `
local window = tonumber(ARGV[4])
local known = redis.call('SISMEMBER', KEYS[4], ARGV[5]) == 1
local wait = 0
for i = 1, 3 do
  if not (i > 1 and known) and tonumber(redis.call('GET', KEYS[i]) or '0') >= tonumber(ARGV[i]) then
    local ttl = redis.call('TTL', KEYS[i])
    if ttl <= 0 then ttl = window end
    if ttl > wait then wait = ttl end
  end
end
if wait > 0 then return wait end
for i = 1, 3 do
  redis.call('INCR', KEYS[i])
  redis.call('EXPIRE', KEYS[i], window, 'NX')
end
return 0`;

/** Takes back one counted attempt; a counter whose window ended meanwhile is left alone. */
const GIVE_BACK = `
for i = 1, #KEYS do
  if tonumber(redis.call('GET', KEYS[i]) or '0') > 0 then redis.call('DECR', KEYS[i]) end
end
return 0`;

/**
 * KEYS: the pair counter, the account's known addresses, then the address and account
 * counters; ARGV: the address, the known addresses' lifetime. The pair counter starts again,
 * the address becomes a known one, and the other two counters get their attempt back.
 * One script, not a MULTI: a login is a hot path, and ioredis builds a pipeline object per
 * MULTI that copies every script defined on the shared connection (BullMQ's dozens).
 */
const SUCCEED = `
redis.call('DEL', KEYS[1])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[2])
for i = 3, 4 do
  if tonumber(redis.call('GET', KEYS[i]) or '0') > 0 then redis.call('DECR', KEYS[i]) end
end
return 0`;

export class LoginThrottle {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private keys(kind: string, email: string, ip: string) {
    const base = `${this.prefix}:login-fail:${kind}`;
    return {
      pair: `${base}:pair:${email}|${ip}`,
      address: `${base}:ip:${ip}`,
      account: `${base}:acct:${email}`,
      known: `${this.prefix}:login-known:${kind}:${email}`,
    };
  }

  /**
   * Throws 429 RATE_LIMITED with Retry-After when any window is exhausted; otherwise counts
   * this attempt as a failure until `succeed` or `notFailed` says otherwise.
   */
  async begin(kind: string, email: string, ip: string): Promise<void> {
    const k = this.keys(kind, email, ip);
    const wait = Number(
      await this.redis.eval(
        TAKE_ATTEMPT,
        4,
        k.pair,
        k.address,
        k.account,
        k.known,
        LIMITS.pair,
        LIMITS.address,
        LIMITS.account,
        WINDOW_SECONDS,
        ip,
      ),
    );
    if (wait > 0) throw errors.rateLimited(wait);
  }

  /**
   * The attempt logged in: the account-and-address counter starts again, the others get
   * their count back, and the address becomes one the account is known to use.
   */
  async succeed(kind: string, email: string, ip: string): Promise<void> {
    const keys = this.keys(kind, email, ip);
    // One round trip; every key carries the prefix, so one slot in a cluster.
    await this.redis.eval(SUCCEED, 4, keys.pair, keys.known, keys.address, keys.account, ip, KNOWN_ADDRESS_SECONDS);
  }

  /** The attempt was not a failure (a right password still waiting for its second factor). */
  async notFailed(kind: string, email: string, ip: string): Promise<void> {
    const keys = this.keys(kind, email, ip);
    await this.redis.eval(GIVE_BACK, 3, keys.pair, keys.address, keys.account);
  }
}
