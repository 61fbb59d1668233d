import { z } from 'zod';
import { QuoteSchema, quoteView } from '../../domain/prices/quote-store';
import { RandomWalkSchema } from '../../domain/prices/random-walk';
import { deleteQuote, randomWalk, setQuote, setRandomWalk } from '../../domain/prices/simulator';
import { asStaff } from '../http/access';
import { Price } from '../http/amounts';
import { defineRoute, json, type RouteSpec } from '../http/route';

export const simulatorRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/simulator/quotes',
    operationId: 'setQuote',
    summary: 'Set the latest bid and ask of an instrument',
    description:
      'The order engine prices from these. Both positive, ask above bid, at most the instrument’s digits. The change becomes a tick the trading engine evaluates in the workers (pending orders, sl and tp, trailing stops, margin).',
    tags: ['simulator'],
    access: { kind: 'staff', permission: 'manage_simulator' },
    body: z.object({ symbol: z.string().min(1).max(32), bid: Price, ask: Price }),
    responses: { 200: { description: 'The quote now in force', schema: QuoteSchema } },
    handler: async ({ body, em, services, caller }) => json(200, await setQuote(em, services, asStaff(caller), body)),
  }),
  defineRoute({
    method: 'get',
    path: '/simulator/quotes',
    operationId: 'listQuotes',
    summary: 'The latest quote of every symbol',
    tags: ['simulator'],
    access: { kind: 'staff', permission: 'manage_simulator' },
    responses: { 200: { description: 'Quotes by symbol', schema: z.object({ items: z.array(QuoteSchema) }) } },
    handler: async ({ services }) => json(200, { items: (await services.quotes.all()).map(quoteView) }),
  }),
  defineRoute({
    method: 'delete',
    path: '/simulator/quotes/{symbol}',
    operationId: 'deleteQuote',
    summary: 'Remove a quote: the symbol then has no price',
    tags: ['simulator'],
    access: { kind: 'staff', permission: 'manage_simulator' },
    params: z.object({ symbol: z.string().min(1).max(32) }),
    responses: { 204: { description: 'Removed' }, 404: { description: 'No quote for that symbol' } },
    handler: async ({ params, em, services, caller }) => {
      await deleteQuote(em, services.quotes, asStaff(caller), params.symbol);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/simulator/random-walk',
    operationId: 'getRandomWalk',
    summary: 'Whether the random walk runs, and for what',
    tags: ['simulator'],
    access: { kind: 'staff', permission: 'manage_simulator' },
    responses: { 200: { description: 'The schedule', schema: RandomWalkSchema } },
    handler: async ({ services }) => json(200, await randomWalk(services.jobs)),
  }),
  defineRoute({
    method: 'put',
    path: '/simulator/random-walk',
    operationId: 'setRandomWalk',
    summary: 'Start, change or stop the random walk (off by default)',
    description:
      'A BullMQ job scheduler runs one simulator-tick job every interval_ms; each moves the mid price of every listed symbol that has a quote.',
    tags: ['simulator'],
    access: { kind: 'staff', permission: 'manage_simulator' },
    body: z.object({
      enabled: z.boolean(),
      symbols: z.array(z.string().min(1).max(32)).min(1).max(200).optional(),
      interval_ms: z.int().min(250).max(3_600_000).default(1000),
      volatility_bps: z.number().gt(0).max(1000).default(5),
    }),
    responses: { 200: { description: 'The schedule now in force', schema: RandomWalkSchema } },
    handler: async ({ body, em, services, caller }) => json(200, await setRandomWalk(em, services.jobs, asStaff(caller), body)),
  }),
];
