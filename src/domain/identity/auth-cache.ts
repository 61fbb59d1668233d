import type { Redis } from 'ioredis';

/**
 * What the API needs to know about a credential (a session, an API token) on every
 * request, kept in Redis so that authenticating a request costs one Redis GET and no
 * Postgres query.
 *
 * Consistency rules (Postgres is the truth, Redis a cache of it):
 * - revocation writes a tombstone that outlives any access token of the credential, before
 *   the revocation commits, so no request after the revocation answer sees it as active;
 * - a miss is filled from Postgres with SET NX, so a fill that raced a revocation never
 *   overwrites the tombstone;
 * - a change of permissions (no route makes one yet) must overwrite active entries,
 *   never delete them, for the same reason, and must leave tombstones alone;
 * - when Redis cannot be reached, callers fall back to Postgres.
 */
export type Cached<T> = ({ state: 'active' } & T) | { state: 'revoked' };

/** Longer than the longest access token lifetime (ACCESS_TOKEN_TTL_SECONDS is at most 86400). */
const TOMBSTONE_TTL_SECONDS = 86_400 + 300;
const ACTIVE_TTL_SECONDS = 3600;

export class AuthCache<T extends object> {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly kind: 'session' | 'apitoken',
  ) {}

  private key(id: string): string {
    return `${this.prefix}:auth:${this.kind}:${id}`;
  }

  /** The cached state, or undefined on a miss. Throws when Redis cannot be reached. */
  async get(id: string): Promise<Cached<T> | undefined> {
    const raw = await this.redis.get(this.key(id));
    return raw ? (JSON.parse(raw) as Cached<T>) : undefined;
  }

  /** Fills a miss; never replaces what is there (a tombstone may have landed meanwhile). */
  async fill(id: string, value: Cached<T>, maxTtlSeconds = ACTIVE_TTL_SECONDS): Promise<void> {
    const ttl = value.state === 'active' ? Math.max(1, Math.min(ACTIVE_TTL_SECONDS, maxTtlSeconds)) : TOMBSTONE_TTL_SECONDS;
    await this.redis.set(this.key(id), JSON.stringify(value), 'EX', ttl, 'NX');
  }

  async revoke(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    const tombstone = JSON.stringify({ state: 'revoked' });
    const pipeline = this.redis.multi();
    for (const id of ids) pipeline.set(this.key(id), tombstone, 'EX', TOMBSTONE_TTL_SECONDS);
    const results = await pipeline.exec();
    const failed = results?.find(([err]) => err);
    if (failed) throw failed[0];
  }
}
