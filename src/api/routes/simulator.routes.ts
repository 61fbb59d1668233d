import { z } from 'zod';
import { recordAudit } from '../../domain/audit/audit';
import { findInstrument } from '../../domain/instruments/instruments';
import { SimulatorTickJob, RANDOM_WALK_SCHEDULER_ID } from '../../jobs/simulator-tick.job';
import { dec, decText } from '../../platform/decimal';
import { errors, fieldError } from '../../platform/errors';
import { QuoteSchema, quoteView } from '../../domain/prices/quote-store';
import { RandomWalkSchema, randomWalkView } from '../../domain/prices/random-walk';
import { signalTicks } from '../../domain/engine/ticks';
import { Instrument } from '../../entities/instrument.entity';
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
    handler: async ({ body, em, services, caller }) => {
      const instrument = await em.findOne(Instrument, { symbol: body.symbol });
      if (!instrument) throw fieldError('body', ['symbol'], `Unknown instrument ${body.symbol}`);
      if (body.ask <= body.bid) throw fieldError('body', ['ask'], 'ask must be above bid');
      const digits = instrument.digits;
      for (const side of ['bid', 'ask'] as const) {
        if (dec(body[side]).decimalPlaces() > digits)
          throw fieldError('body', [side], `At most ${digits} decimal places for ${body.symbol}`);
      }
      const quote = await services.quotes.set(body.symbol, decText(body.bid), decText(body.ask));
      recordAudit(em, asStaff(caller), {
        action: 'quote.set',
        entityType: 'instrument',
        entityId: body.symbol,
        after: quoteView(quote),
      });
      await em.flush();
      await signalTicks({ jobs: services.jobs, logger: services.logger }, [body.symbol]);
      return json(200, quoteView(quote));
    },
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
      if (!(await services.quotes.remove(params.symbol))) throw errors.notFound('Quote');
      recordAudit(em, asStaff(caller), { action: 'quote.deleted', entityType: 'instrument', entityId: params.symbol });
      await em.flush();
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
    handler: async ({ services }) => {
      const found = await services.jobs.scheduled(SimulatorTickJob, RANDOM_WALK_SCHEDULER_ID);
      const payload = found?.payload as { symbols: string[]; volatility_bps: number } | undefined;
      const schedule = found
        ? { symbols: payload?.symbols ?? [], interval_ms: found.everyMs ?? null, volatility_bps: payload?.volatility_bps ?? null }
        : undefined;
      return json(200, randomWalkView(schedule));
    },
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
    handler: async ({ body, em, services, caller }) => {
      if (body.enabled) {
        if (!body.symbols) throw fieldError('body', ['symbols'], 'Field required', 'missing');
        for (const [i, symbol] of body.symbols.entries()) {
          await findInstrument(em, symbol).catch(() => {
            throw fieldError('body', ['symbols', i], `Unknown instrument ${symbol}`);
          });
        }
        await services.jobs.schedule(SimulatorTickJob, RANDOM_WALK_SCHEDULER_ID, body.interval_ms, {
          symbols: body.symbols,
          volatility_bps: body.volatility_bps,
        });
      } else {
        await services.jobs.unschedule(SimulatorTickJob, RANDOM_WALK_SCHEDULER_ID);
      }
      const view = randomWalkView(
        body.enabled ? { symbols: body.symbols!, interval_ms: body.interval_ms, volatility_bps: body.volatility_bps } : undefined,
      );
      recordAudit(em, asStaff(caller), {
        action: 'random_walk.updated',
        entityType: 'simulator',
        entityId: 'random-walk',
        after: view,
      });
      await em.flush();
      return json(200, view);
    },
  }),
];
