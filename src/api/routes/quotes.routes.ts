import { z } from 'zod';
import { InstrumentSymbol } from '../../domain/instruments/instruments';
import { customerTradeableSymbols } from '../../domain/instruments/customer-instruments';
import { latestQuotes, QUOTE_SYMBOLS_MAX, QuoteBoardItemSchema } from '../../domain/prices/quote-board';
import { pageQuery, pageSchema } from '../http/paging';
import { defineRoute, json, type RouteSpec } from '../http/route';

/** `EURUSD,GBPUSD`: comma-separated, each an instrument symbol; repeats count once. */
const SymbolList = z
  .string()
  .transform((text) => [...new Set(text.split(',').filter((s) => s !== ''))])
  .pipe(z.array(InstrumentSymbol).min(1).max(QUOTE_SYMBOLS_MAX))
  .meta({ description: `Comma-separated symbols, 1 to ${QUOTE_SYMBOLS_MAX} (EURUSD,GBPUSD)` });

export const quoteRoutes: RouteSpec[] = [
  defineRoute({
    method: 'get',
    path: '/quotes',
    operationId: 'listLatestQuotes',
    summary: 'The latest bid and ask of instruments',
    description:
      `The price source's latest quotes (before any group's spread: \`GET /customers/me/instruments\` gives a ` +
      `customer's spreads), with the instrument's digits. With \`symbols\` (1 to ${QUOTE_SYMBOLS_MAX}), those ` +
      'instruments; a symbol that names no instrument is 422 at `symbols` naming it. Without, every instrument ' +
      'you may trade (a customer: every instrument that a group of your trading accounts does not disable; staff: ' +
      'every instrument), by symbol, paged. An instrument with no price at the moment is left out.',
    tags: ['quotes'],
    access: { kind: 'authenticated' },
    query: z.object({ symbols: SymbolList.optional(), ...pageQuery() }),
    responses: { 200: { description: 'Quotes by symbol', schema: pageSchema(QuoteBoardItemSchema) } },
    handler: async ({ query, em, services, caller }) =>
      json(
        200,
        await latestQuotes(
          em,
          services.quotes,
          query.symbols,
          query,
          caller?.kind === 'customer' ? () => customerTradeableSymbols(em, caller.customerId) : undefined,
        ),
      ),
  }),
];
