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
 * The latest bid and ask of every symbol, in one Redis hash: the order engine reads a
 * quote with one HGET, from any process. The simulator (manually or by its random walk)
 * is the only writer.
 */
export class QuoteStore {
  private readonly key: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.key = `${prefix}:quotes`;
  }

  async get(symbol: string): Promise<Quote | undefined> {
    const raw = await this.redis.hget(this.key, symbol);
    return raw ? (JSON.parse(raw) as Quote) : undefined;
  }

  async getMany(symbols: string[]): Promise<Map<string, Quote>> {
    const out = new Map<string, Quote>();
    if (symbols.length === 0) return out;
    const raws = await this.redis.hmget(this.key, ...symbols);
    raws.forEach((raw, i) => {
      if (raw) out.set(symbols[i]!, JSON.parse(raw) as Quote);
    });
    return out;
  }

  async all(): Promise<Quote[]> {
    const raw = await this.redis.hvals(this.key);
    return raw.map((r) => JSON.parse(r) as Quote).sort((a, b) => a.symbol.localeCompare(b.symbol));
  }

  async set(symbol: string, bid: string, ask: string): Promise<Quote> {
    const quote: Quote = { symbol, bid, ask, updated_at: new Date().toISOString() };
    await this.redis.hset(this.key, symbol, JSON.stringify(quote));
    return quote;
  }

  async setMany(quotes: Array<{ symbol: string; bid: string; ask: string }>): Promise<void> {
    if (quotes.length === 0) return;
    const now = new Date().toISOString();
    const fields = quotes.flatMap((q) => [q.symbol, JSON.stringify({ ...q, updated_at: now } satisfies Quote)]);
    await this.redis.hset(this.key, ...fields);
  }

  /** True if there was a quote to remove. */
  async remove(symbol: string): Promise<boolean> {
    return (await this.redis.hdel(this.key, symbol)) === 1;
  }
}
