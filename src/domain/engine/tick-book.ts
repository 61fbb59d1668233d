import type { RedisClient } from '../../platform/redis';
import { parseQuote, quoteVersionKey, quotesKey, type Quote } from '../prices/quote-store';

const UNLOCK = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
/**
 * Takes the lock (SET NX PX) and, when taken, answers the symbol's latest change, the last
 * evaluated one and the quote: the quote and its change counter are written in one MULTI, so
 * the quote read here is the one of that change.
 */
const BEGIN = `if redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then
  return {1, redis.call('hget', KEYS[2], ARGV[3]) or '0', redis.call('hget', KEYS[3], ARGV[3]) or '0', redis.call('hget', KEYS[4], ARGV[3]) or ''}
end
return {0, '0', '0', ''}`;
/**
 * Records a finished evaluation and, when no change came in since the one it began from,
 * releases the lock in the same step: a tick arriving after this finds the lock free, one
 * arriving before it left a newer change, which the holder sees and evaluates.
 */
const FINISH = `redis.call('hset', KEYS[3], ARGV[3], ARGV[2])
local ver = redis.call('hget', KEYS[2], ARGV[3]) or '0'
if tonumber(ver) > tonumber(ARGV[2]) then return {0, ver, redis.call('hget', KEYS[4], ARGV[3]) or ''} end
if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('del', KEYS[1]) end
return {1, ver, ''}`;
const EXTEND = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;

/**
 * Which quote changes of each symbol the trading engine has evaluated, and who is
 * evaluating a symbol now. In Redis, under the queue prefix:
 * - the quote store's change counter per symbol (`quotes:ver`, bumped with every quote write);
 * - `engine:done` (hash): per symbol, the counter value the last finished evaluation began from;
 * - `engine:lock:<symbol>`: held by the one worker evaluating the symbol, with a lease;
 * and reads the quote store's hash (`quotes`) with the state, so a pass needs no read of its own.
 *
 * A tick job takes the lock or, when another worker holds it, returns at once: the holder
 * sees `ver` ahead of `done` when its pass ends and evaluates again, from the latest quote
 * (or, at its job's bound, releases the lock and queues a tick job that does).
 * So ticks of one symbol are evaluated one at a time, in order, and a burst is coalesced to
 * the latest price. A worker killed mid-pass never wrote `done`: the next tick, the killed
 * job's retry or the sweep evaluates again. The database, not this book, guards against
 * double fills; the book only saves work.
 */
export class TickBook {
  private readonly ver: string;
  private readonly done: string;
  private readonly quotes: string;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {
    this.ver = quoteVersionKey(prefix);
    this.done = `${prefix}:engine:done`;
    this.quotes = quotesKey(prefix);
  }

  private lockKey(symbol: string): string {
    return `${this.prefix}:engine:lock:${symbol}`;
  }

  /** The latest change of the symbol and the last one evaluated (0 when none). */
  async state(symbol: string): Promise<{ ver: number; done: number }> {
    const [ver, done] = await Promise.all([this.redis.hget(this.ver, symbol), this.redis.hget(this.done, symbol)]);
    return { ver: Number(ver ?? 0), done: Number(done ?? 0) };
  }

  /** Symbols with a change not yet evaluated. */
  async behind(): Promise<string[]> {
    const [ver, done] = await Promise.all([this.redis.hgetall(this.ver), this.redis.hgetall(this.done)]);
    return Object.entries(ver)
      .filter(([symbol, v]) => Number(v) > Number(done[symbol] ?? 0))
      .map(([symbol]) => symbol);
  }

  /**
   * Takes the symbol's lock, and reads its state and latest quote with it (one round trip);
   * undefined when another worker holds the lock. `quote` is undefined for a symbol never quoted.
   */
  async begin(
    symbol: string,
    token: string,
    leaseMs: number,
  ): Promise<{ ver: number; done: number; quote: Quote | undefined } | undefined> {
    const [locked, ver, done, quote] = (await this.redis.eval(
      BEGIN,
      4,
      this.lockKey(symbol),
      this.ver,
      this.done,
      this.quotes,
      token,
      String(leaseMs),
      symbol,
    )) as [number, string, string, string];
    return locked === 1 ? { ver: Number(ver), done: Number(done), quote: quote ? parseQuote(quote) : undefined } : undefined;
  }

  /**
   * Marks change `ver` evaluated and, when it is still the latest, releases the lock (one
   * round trip). Answers whether the lock was released, the latest change and, when it was
   * not released, the latest quote (for the next pass).
   */
  async finish(
    symbol: string,
    token: string,
    ver: number,
  ): Promise<{ released: boolean; ver: number; quote: Quote | undefined }> {
    const [released, latest, quote] = (await this.redis.eval(
      FINISH,
      4,
      this.lockKey(symbol),
      this.ver,
      this.done,
      this.quotes,
      token,
      String(ver),
      symbol,
    )) as [number, string, string];
    return { released: released === 1, ver: Number(latest), quote: quote ? parseQuote(quote) : undefined };
  }

  async extend(symbol: string, token: string, leaseMs: number): Promise<boolean> {
    return Number(await this.redis.eval(EXTEND, 1, this.lockKey(symbol), token, String(leaseMs))) === 1;
  }

  async unlock(symbol: string, token: string): Promise<void> {
    await this.redis.eval(UNLOCK, 1, this.lockKey(symbol), token);
  }
}
