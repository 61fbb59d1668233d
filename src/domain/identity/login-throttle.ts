import type { Redis } from 'ioredis';
import { errors } from '../../platform/errors';

/**
 * Failed-login throttling, in Redis fixed windows of 15 minutes:
 * - per account and client address: 5 failures, then that address waits out the window;
 * - per client address: 30 failures across all accounts (credential stuffing);
 * - per account from everywhere: 100 failures, a backstop against distributed guessing.
 * A stranger can therefore block only their own address; the owner, from another address,
 * is blocked only by a distributed attack of 100 failures, and then for at most 15 minutes.
 * A successful login clears the account-and-address counter.
 */
const WINDOW_SECONDS = 15 * 60;
const LIMITS = { pair: 5, address: 30, account: 100 } as const;

export class LoginThrottle {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private keys(kind: string, email: string, ip: string) {
    const base = `${this.prefix}:login-fail:${kind}`;
    return { pair: `${base}:pair:${email}|${ip}`, address: `${base}:ip:${ip}`, account: `${base}:acct:${email}` };
  }

  /** Throws 429 RATE_LIMITED with Retry-After when any window is exhausted. */
  async check(kind: string, email: string, ip: string): Promise<void> {
    const keys = this.keys(kind, email, ip);
    const names = Object.keys(keys) as Array<keyof typeof keys>;
    const pipeline = this.redis.multi();
    for (const name of names) pipeline.get(keys[name]).ttl(keys[name]);
    const results = (await pipeline.exec()) ?? [];
    let retryAfter = 0;
    names.forEach((name, i) => {
      const count = Number(results[i * 2]?.[1] ?? 0);
      const ttl = Number(results[i * 2 + 1]?.[1] ?? 0);
      if (count >= LIMITS[name]) retryAfter = Math.max(retryAfter, ttl > 0 ? ttl : WINDOW_SECONDS);
    });
    if (retryAfter > 0) throw errors.rateLimited(retryAfter);
  }

  async fail(kind: string, email: string, ip: string): Promise<void> {
    const keys = this.keys(kind, email, ip);
    const pipeline = this.redis.multi();
    for (const key of Object.values(keys)) pipeline.incr(key).expire(key, WINDOW_SECONDS, 'NX');
    await pipeline.exec();
  }

  async succeed(kind: string, email: string, ip: string): Promise<void> {
    await this.redis.del(this.keys(kind, email, ip).pair);
  }
}
