import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { JobProducer } from '../../jobs/job-producer';
import { RANDOM_WALK_SCHEDULER_ID, SimulatorTickJob } from '../../jobs/simulator-tick.job';
import { Instrument } from '../../entities/instrument.entity';
import { dec, decText } from '../../platform/decimal';
import { errors, fieldError } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import { signalTicks } from './tick-signal';
import type { StaffCaller } from '../../platform/caller';
import { findInstrument } from '../instruments/instruments';
import { quoteView, type QuoteStore, type QuoteView } from './quote-store';
import { randomWalkView, type RandomWalkView } from './random-walk';

export interface SimulatorDeps {
  quotes: QuoteStore;
  jobs: JobProducer;
  logger: Logger;
}

/**
 * Sets a symbol's quote by hand. A quote is a price of a listed instrument: bid and ask
 * positive (checked at the edge), ask above bid, at most the instrument's digits. Audited
 * in the caller's unit of work; the tick goes to the workers after the audit commits, never
 * evaluated in the request.
 */
export async function setQuote(
  em: EntityManager,
  deps: SimulatorDeps,
  actor: StaffCaller,
  input: { symbol: string; bid: number; ask: number },
): Promise<QuoteView> {
  const instrument = await em.findOne(Instrument, { symbol: input.symbol });
  if (!instrument) throw fieldError('body', ['symbol'], `Unknown instrument ${input.symbol}`);
  if (input.ask <= input.bid) throw fieldError('body', ['ask'], 'ask must be above bid');
  const digits = instrument.digits;
  for (const side of ['bid', 'ask'] as const) {
    if (dec(input[side]).decimalPlaces() > digits)
      throw fieldError('body', [side], `At most ${digits} decimal places for ${input.symbol}`);
  }
  const view = quoteView(await deps.quotes.set(input.symbol, decText(input.bid), decText(input.ask)));
  recordAudit(em, actor, { action: 'quote.set', entityType: 'instrument', entityId: input.symbol, after: view });
  await em.flush();
  await signalTicks(deps, [input.symbol]);
  return view;
}

/** Removes a symbol's quote (it then has no price), audited; 404 when it had none. */
export async function deleteQuote(em: EntityManager, quotes: QuoteStore, actor: StaffCaller, symbol: string): Promise<void> {
  if (!(await quotes.remove(symbol))) throw errors.notFound('Quote');
  recordAudit(em, actor, { action: 'quote.deleted', entityType: 'instrument', entityId: symbol });
  await em.flush();
}

/** The random walk's schedule as the job scheduler holds it. */
export async function randomWalk(jobs: JobProducer): Promise<RandomWalkView> {
  const found = await jobs.scheduled(SimulatorTickJob, RANDOM_WALK_SCHEDULER_ID);
  const payload = found?.payload as { symbols: string[]; volatility_bps: number } | undefined;
  const schedule = found
    ? { symbols: payload?.symbols ?? [], interval_ms: found.everyMs ?? null, volatility_bps: payload?.volatility_bps ?? null }
    : undefined;
  return randomWalkView(schedule);
}

/**
 * Starts, changes or stops the random walk: one job scheduler whose every run moves the mid
 * price of each listed symbol. Every symbol must be a listed instrument. Audited.
 */
export async function setRandomWalk(
  em: EntityManager,
  jobs: JobProducer,
  actor: StaffCaller,
  input: { enabled: boolean; symbols?: string[]; interval_ms: number; volatility_bps: number },
): Promise<RandomWalkView> {
  let view: RandomWalkView;
  if (input.enabled) {
    const symbols = input.symbols;
    if (!symbols) throw fieldError('body', ['symbols'], 'Field required', 'missing');
    for (const [i, symbol] of symbols.entries()) {
      await findInstrument(em, symbol).catch(() => {
        throw fieldError('body', ['symbols', i], `Unknown instrument ${symbol}`);
      });
    }
    await jobs.schedule(SimulatorTickJob, RANDOM_WALK_SCHEDULER_ID, input.interval_ms, {
      symbols,
      volatility_bps: input.volatility_bps,
    });
    view = randomWalkView({ symbols, interval_ms: input.interval_ms, volatility_bps: input.volatility_bps });
  } else {
    await jobs.unschedule(SimulatorTickJob, RANDOM_WALK_SCHEDULER_ID);
    view = randomWalkView(undefined);
  }
  recordAudit(em, actor, { action: 'random_walk.updated', entityType: 'simulator', entityId: 'random-walk', after: view });
  await em.flush();
  return view;
}
