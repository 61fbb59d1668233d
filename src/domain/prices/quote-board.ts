import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Instrument } from '../../entities/instrument.entity';
import { fieldError } from '../../platform/errors';
import { type QuoteStore, QuoteSchema, quoteView } from './quote-store';

/** At most this many symbols in one `symbols` query: one HMGET and one indexed lookup. */
export const QUOTE_SYMBOLS_MAX = 50;

/** A latest quote as every caller may read it: the simulator's raw bid and ask, with the instrument's digits. */
export const QuoteBoardItemSchema = QuoteSchema.extend({
  digits: z.int().describe('Decimal places of the price'),
});
export type QuoteBoardItem = z.output<typeof QuoteBoardItemSchema>;

export interface QuotePage {
  items: QuoteBoardItem[];
  page: number;
  page_size: number;
  total: number;
}

/**
 * The latest quotes of the symbols asked for, or, without a list, of every instrument the
 * caller may trade (`tradeable`, a customer's: those of its groups) or, for staff, of every
 * instrument, by symbol and paged. An instrument with no price at the
 * moment (its quote removed from the simulator) is left out: there is nothing to show, and
 * it is not the caller's mistake. A symbol that names no instrument is: 422 at `symbols`
 * naming each, so a typo is not mistaken for a missing price.
 */
export async function latestQuotes(
  em: EntityManager,
  quotes: QuoteStore,
  symbols: string[] | undefined,
  paging: { page: number; page_size: number },
  /** Without `symbols`, the instruments to list (symbol to digits); every instrument when absent. */
  tradeable?: () => Promise<Map<string, number>>,
): Promise<QuotePage> {
  const digits = symbols ? await knownDigits(em, symbols) : tradeable ? await tradeable() : await allDigits(em);
  if (symbols) {
    const unknown = symbols.filter((s) => !digits.has(s));
    if (unknown.length) throw fieldError('query', ['symbols'], `Unknown instrument(s): ${unknown.join(', ')}`);
  }
  const priced = await quotes.getMany([...digits.keys()].sort());
  const all = [...priced.values()].map((q) => ({ ...quoteView(q), digits: digits.get(q.symbol)! }));
  const from = (paging.page - 1) * paging.page_size;
  return { items: all.slice(from, from + paging.page_size), page: paging.page, page_size: paging.page_size, total: all.length };
}

async function knownDigits(em: EntityManager, symbols: string[]): Promise<Map<string, number>> {
  const rows = await em.find(Instrument, { symbol: { $in: symbols } }, { fields: ['symbol', 'digits'] });
  return new Map(rows.map((i) => [i.symbol, i.digits]));
}

async function allDigits(em: EntityManager): Promise<Map<string, number>> {
  const rows = await em.find(Instrument, {}, { fields: ['symbol', 'digits'] });
  return new Map(rows.map((i) => [i.symbol, i.digits]));
}
