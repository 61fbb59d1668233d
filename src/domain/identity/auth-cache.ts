import type { RedisClient } from '../../platform/redis';

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
 * - a change of permissions overwrites the entries of the credentials it touches after it
 *   commits (replaceActive), never deletes them (a racing fill with the old permissions
 *   would then win), and leaves tombstones alone;
 * - when Redis cannot be reached, callers fall back to Postgres.
 */
export type Cached<T> = ({ state: 'active' } & T) | { state: 'revoked' };

/** Longer than the longest access token lifetime (ACCESS_TOKEN_TTL_SECONDS is at most 86400). */
const TOMBSTONE_TTL_SECONDS = 86_400 + 300;
const ACTIVE_TTL_SECONDS = 3600;
/** Distinct cached values whose parse is remembered; past it the memo starts over. */
const PARSED_MAX = 10_000;

/** KEYS: the entries; ARGV: their values, then their TTLs. Sets each unless it holds a tombstone. */
const REPLACE_ACTIVE = `
local n = #KEYS
for i = 1, n do
  local current = redis.call('GET', KEYS[i])
  if not (current and cjson.decode(current).state == 'revoked') then
    redis.call('SET', KEYS[i], ARGV[i], 'EX', ARGV[n + i])
  end
end
return n`;

/** KEYS: the entry, then the use marker; ARGV: the marker's TTL. The entry, and whether this call set the marker. */
const GET_MARKING_USE = `
local entry = redis.call('GET', KEYS[1])
local first = 0
if entry then first = redis.call('SET', KEYS[2], '1', 'EX', ARGV[1], 'NX') and 1 or 0 end
return {entry, first}`;

export class AuthCache<T extends object> {
  /**
   * Hot path: every request of a session reads the same bytes from Redis until they change.
   * Their parse is remembered by the exact bytes, never by the id: what Redis answers now
   * still decides every request (a tombstone or new permissions are other bytes), so this
   * holds no state of a credential and cannot outlive a revocation. The values are frozen:
   * callers share them (authenticate keys its permission sets on them).
   */
  private readonly parsed = new Map<string, Cached<T>>();

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly kind: 'session' | 'apitoken',
  ) {}

  private key(id: string): string {
    return `${this.prefix}:auth:${this.kind}:${id}`;
  }

  private parse(raw: string): Cached<T> {
    let value = this.parsed.get(raw);
    if (value === undefined) {
      value = deepFreeze(JSON.parse(raw) as Cached<T>);
      if (this.parsed.size >= PARSED_MAX) this.parsed.clear();
      this.parsed.set(raw, value);
    }
    return value;
  }

  /** The cached state, or undefined on a miss. Throws when Redis cannot be reached. */
  async get(id: string): Promise<Cached<T> | undefined> {
    const raw = await this.redis.get(this.key(id));
    return raw ? this.parse(raw) : undefined;
  }

  /** The cached states of many credentials in one round trip (undefined for a miss). */
  async getMany(ids: readonly string[]): Promise<Array<Cached<T> | undefined>> {
    if (ids.length === 0) return [];
    const raws = await this.redis.mget(...ids.map((id) => this.key(id)));
    return raws.map((raw) => (raw ? this.parse(raw) : undefined));
  }

  /** Fills a miss; never replaces what is there (a tombstone may have landed meanwhile). */
  async fill(id: string, value: Cached<T>, maxTtlSeconds = ACTIVE_TTL_SECONDS): Promise<void> {
    const ttl = value.state === 'active' ? Math.max(1, Math.min(ACTIVE_TTL_SECONDS, maxTtlSeconds)) : TOMBSTONE_TTL_SECONDS;
    await this.redis.set(this.key(id), JSON.stringify(value), 'EX', ttl, 'NX');
  }

  /**
   * Writes new facts for credentials whose permissions changed, whether or not they are
   * cached now (a fill racing the change then finds the new entry and leaves it), but never
   * over a tombstone. Call it after the change commits.
   */
  async replaceActive(entries: Array<{ id: string; facts: T; maxTtlSeconds?: number }>): Promise<void> {
    if (entries.length === 0) return;
    const ttl = (e: { maxTtlSeconds?: number }) =>
      Math.max(1, Math.min(ACTIVE_TTL_SECONDS, e.maxTtlSeconds ?? ACTIVE_TTL_SECONDS));
    await this.redis.eval(
      REPLACE_ACTIVE,
      entries.length,
      ...entries.map((e) => this.key(e.id)),
      ...entries.map((e) => JSON.stringify({ state: 'active', ...e.facts })),
      ...entries.map((e) => String(ttl(e))),
    );
  }

  /**
   * `get`, and in the same round trip a use marker that lives `everySeconds`: `firstUse` is
   * true for the one call per period that set it (API tokens record last_used_at then).
   */
  async getMarkingUse(id: string, everySeconds: number): Promise<{ value: Cached<T> | undefined; firstUse: boolean }> {
    const [raw, first] = (await this.redis.eval(GET_MARKING_USE, 2, this.key(id), `${this.key(id)}:used`, everySeconds)) as [
      string | null,
      number,
    ];
    return { value: raw ? this.parse(raw) : undefined, firstUse: first === 1 };
  }

  /** Sets the use marker of `id` for `everySeconds`; true when this call set it. */
  async markUse(id: string, everySeconds: number): Promise<boolean> {
    return (await this.redis.set(`${this.key(id)}:used`, '1', 'EX', everySeconds, 'NX')) === 'OK';
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

function deepFreeze<V>(value: V): V {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
