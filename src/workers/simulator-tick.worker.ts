import { Instrument } from '../entities/instrument.entity';
import { SimulatorTickJob } from '../jobs/simulator-tick.job';
import { stepQuote } from '../domain/prices/random-walk';
import { dec } from '../platform/decimal';
import { signalTicks } from '../domain/engine/ticks';
import { defineProcessor } from './processor';

/**
 * Moves the quotes of the configured symbols one random-walk step. Symbols without a
 * quote yet are skipped: the walk starts from a price someone set.
 */
export const simulatorTickProcessor = defineProcessor(
  SimulatorTickJob,
  async ({ symbols, volatility_bps }, { em, services, logger }) => {
    const [quotes, instruments] = await Promise.all([
      services.quotes.getMany(symbols),
      em.find(Instrument, { symbol: { $in: symbols } }, { fields: ['symbol', 'digits'] }),
    ]);
    const digits = new Map(instruments.map((i) => [i.symbol, i.digits]));
    const next = [...quotes.values()]
      .filter((q) => digits.has(q.symbol))
      .map((q) => {
        const step = stepQuote(dec(q.bid), dec(q.ask), digits.get(q.symbol)!, volatility_bps);
        return { symbol: q.symbol, bid: step.bid.toFixed(), ask: step.ask.toFixed() };
      });
    await services.quotes.setMany(next);
    await signalTicks(
      { jobs: services.jobs, logger },
      next.map((q) => q.symbol),
    );
    return { moved: next.length };
  },
);
