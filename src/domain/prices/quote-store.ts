import type { RedisClient } from '../../platform/redis';
import { z } from 'zod';
import { num } from '../../platform/decimal';

export interface Quote {
  symbol: string;
  /** Decimal text, exactly as set. */
  bid: string;
  ask: string;
  updated_at: string;
}

/** A quote as the API shows it: prices as JSON numbers. */
export const QuoteSchema = z.object({ symbol: z.string(), bid: z.number(), ask: z.number(), updated_at: z.iso.datetime() });
export type QuoteView = z.output<typeof QuoteSchema>;

export function quoteView(q: Quote): QuoteView {
  return { symbol: q.symbol, bid: num(q.bid)!, ask: num(q.ask)!, updated_at: q.updated_at };
}

/**
 * Per symbol, how many times its quote changed: bumped in the same MULTI as the quote, so no
 * change is stored without being counted (the trading engine's tick book compares it with
 * what it evaluated; see domain/engine/tick-book.ts).
 */
export function quoteVersionKey(prefix: string): string {
  return `${prefix}:quotes:ver`;
}

/** The hash of every symbol's latest quote (JSON text per symbol). */
export function quotesKey(prefix: string): string {
  return `${prefix}:quotes`;
}

/** A quote as stored in the quotes hash. */
export function parseQuote(raw: string): Quote {
  return JSON.parse(raw) as Quote;
}

/** The pub/sub channel every quote change is published on, as a JSON array of quotes. */
export function quoteChannel(prefix: string): string {
  return `${prefix}:live:quotes`;
}

/**
 * The latest bid and ask of every symbol, in one Redis hash: the order engine reads a
 * quote with one HGET, from any process. The simulator (manually or by its random walk)
 * is the only writer.
 */
export class QuoteStore {
  private readonly key: string;
  private readonly versions: string;
  private readonly channel: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.key = quotesKey(prefix);
    this.versions = quoteVersionKey(prefix);
    this.channel = quoteChannel(prefix);
  }

  async get(symbol: string): Promise<Quote | undefined> {
    const raw = await this.redis.hget(this.key, symbol);
    return raw ? parseQuote(raw) : undefined;
  }

  async getMany(symbols: string[]): Promise<Map<string, Quote>> {
    const out = new Map<string, Quote>();
    if (symbols.length === 0) return out;
    const raws = await this.redis.hmget(this.key, ...symbols);
    raws.forEach((raw, i) => {
      if (raw) out.set(symbols[i]!, parseQuote(raw));
    });
    return out;
  }

  async all(): Promise<Quote[]> {
    const raw = await this.redis.hvals(this.key);
    return raw.map(parseQuote).sort((a, b) => a.symbol.localeCompare(b.symbol));
  }

  async set(symbol: string, bid: string, ask: string): Promise<Quote> {
    const quote: Quote = { symbol, bid, ask, updated_at: new Date().toISOString() };
    await this.write([quote]);
    return quote;
  }

  async setMany(quotes: Array<{ symbol: string; bid: string; ask: string }>): Promise<void> {
    if (quotes.length === 0) return;
    const now = new Date().toISOString();
    await this.write(quotes.map((q) => ({ ...q, updated_at: now })));
  }

  /** The quotes and their change counters in one MULTI (one slot: both keys carry the prefix). */
  private async write(quotes: Quote[]): Promise<void> {
    const multi = this.redis.multi().hset(this.key, ...quotes.flatMap((q) => [q.symbol, JSON.stringify(q)]));
    for (const q of quotes) multi.hincrby(this.versions, q.symbol, 1);
    // The quote streams of every API process listen here (pub/sub: only the newest value matters).
    multi.publish(this.channel, JSON.stringify(quotes));
    const replies = await multi.exec();
    const failed = replies?.find(([err]) => err);
    if (failed) throw failed[0];
  }

  /** True if there was a quote to remove. */
  async remove(symbol: string): Promise<boolean> {
    return (await this.redis.hdel(this.key, symbol)) === 1;
  }
}
