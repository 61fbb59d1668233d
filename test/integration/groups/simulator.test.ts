import { RANDOM_WALK_SCHEDULER_ID, SimulatorTickJob } from '../../../src/jobs/simulator-tick.job';
import { D } from '../../../src/platform/decimal';
import { adminToken } from '../../helpers/identity';
import { startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { expectDateTime, expectError, expectOneValidationError, expectStatus, uniqueSymbol } from './groups-kit';

/** The price simulator: quotes (POST/GET/DELETE /simulator/quotes) and the random walk. */

let app: TestApp;
let token: string;
/** digits 5, 3 and 0. */
let FX: string;
let JPY: string;
let IDX: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'simulator' });
  token = await adminToken(app);
  FX = await createInstrument('FX', 5);
  JPY = await createInstrument('JP', 3);
  IDX = await createInstrument('IX', 0);
});
afterAll(async () => {
  await app?.request('PUT', '/simulator/random-walk', { token, body: { enabled: false } });
  await app?.stop();
});

/**
 * The walk is off: no job scheduler exists and no tick is waiting, delayed or running (a tick
 * taken just before it was turned off may still be finishing, so that is waited for).
 */
async function expectNoWalk(): Promise<void> {
  const { jobs } = app.runtime.services;
  expect(await jobs.scheduled(SimulatorTickJob, RANDOM_WALK_SCHEDULER_ID)).toBeUndefined();
  await waitFor('no tick waiting or running', async () => {
    const counts = await jobs.queue(SimulatorTickJob.queue).getJobCounts('waiting', 'delayed', 'active', 'prioritized');
    return Object.values(counts).every((n) => n === 0);
  });
}

/**
 * A tick of a probe symbol, enqueued now and run to completion, that moves the probe: the
 * simulator's worker is live and has taken everything queued before it, so a quote that a
 * stray tick would move has been moved by now.
 */
async function tickAProbe(): Promise<void> {
  const { jobs, queueEvents } = app.runtime.services;
  const probe = await createInstrument('PRB', 5);
  expectStatus(await setQuote({ symbol: probe, bid: 1.2, ask: 1.2001 }), 200);
  const job = await jobs.enqueue(SimulatorTickJob, { symbols: [probe], volatility_bps: 500 });
  await queueEvents.waitFor(job, 10_000);
  expect((await quotes()).get(probe)?.bid).not.toBe(1.2);
}

async function createInstrument(prefix: string, digits: number): Promise<string> {
  const symbol = uniqueSymbol(prefix);
  const res = await app.request('POST', '/api/platform/instruments', {
    token,
    body: { symbol, digits, contract_size: 100_000, base_currency: 'EUR', quote_currency: 'USD' },
  });
  expectStatus(res, 201);
  return symbol;
}

const setQuote = (body: Record<string, unknown>) => app.request('POST', '/simulator/quotes', { token, body });

async function quotes(): Promise<Map<string, { symbol: string; bid: number; ask: number; updated_at: string }>> {
  const res = await app.request('GET', '/simulator/quotes', { token });
  expectStatus(res, 200);
  return new Map(res.body.items.map((q: any) => [q.symbol, q]));
}

function decimalsOf(n: number): number {
  return new D(n).decimalPlaces();
}

describe('the random walk before anyone turns it on', () => {
  test('when nothing was configured, then GET says enabled false with no symbols, and quotes stay still', async () => {
    const res = await app.request('GET', '/simulator/random-walk', { token });
    expectStatus(res, 200);
    expect(res.body).toEqual({ enabled: false, symbols: [], interval_ms: null, volatility_bps: null });
    const symbol = await createInstrument('OFF', 5);
    expectStatus(await setQuote({ symbol, bid: 1.2, ask: 1.2001 }), 200);
    await expectNoWalk();
    const before = (await quotes()).get(symbol);
    await tickAProbe();
    expect((await quotes()).get(symbol)).toEqual(before);
  });
});

describe('POST /simulator/quotes', () => {
  test('when a valid quote is set, then 200 with symbol, bid, ask and updated_at, and GET lists it', async () => {
    const started = Date.now();
    const res = await setQuote({ symbol: FX, bid: 1.08512, ask: 1.08527 });
    expectStatus(res, 200);
    expect(res.body).toEqual({ symbol: FX, bid: 1.08512, ask: 1.08527, updated_at: expect.any(String) });
    expectDateTime(res.body.updated_at);
    expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(started - 1000);
    expect((await quotes()).get(FX)).toEqual(res.body);
  });

  test('when a quote is set again, then it replaces the last one (one quote per symbol)', async () => {
    expectStatus(await setQuote({ symbol: JPY, bid: 150.123, ask: 150.135 }), 200);
    const res = await setQuote({ symbol: JPY, bid: 151.001, ask: 151.002 });
    expectStatus(res, 200);
    const all = await app.request('GET', '/simulator/quotes', { token });
    const mine = all.body.items.filter((q: any) => q.symbol === JPY);
    expect(mine).toEqual([res.body]);
  });

  test('when quotes of several symbols exist, then GET lists them by symbol', async () => {
    expectStatus(await setQuote({ symbol: IDX, bid: 39000, ask: 39002 }), 200);
    expectStatus(await setQuote({ symbol: FX, bid: 1.1, ask: 1.10002 }), 200);
    const res = await app.request('GET', '/simulator/quotes', { token });
    const symbols = res.body.items.map((q: any) => q.symbol);
    expect(symbols).toEqual(expect.arrayContaining([FX, JPY, IDX]));
    expect(symbols).toEqual([...symbols].sort());
  });

  test.each([
    ['ask equal to bid', { bid: 1.1, ask: 1.1 }, ['body', 'ask']],
    ['ask below bid', { bid: 1.1, ask: 1.09999 }, ['body', 'ask']],
    ['more decimals on bid than the digits', { bid: 1.123456, ask: 1.2 }, ['body', 'bid']],
    ['more decimals on ask than the digits', { bid: 1.1, ask: 1.100001 }, ['body', 'ask']],
  ])('when %s, then 422 at that field and the quote is unchanged', async (_what, prices, loc) => {
    expectStatus(await setQuote({ symbol: FX, bid: 1.1, ask: 1.10002 }), 200);
    const before = (await quotes()).get(FX);
    const res = await setQuote({ symbol: FX, ...prices });
    expectStatus(res, 422);
    expect(res.body.detail).toEqual([{ loc, msg: expect.any(String), type: expect.any(String) }]);
    expect((await quotes()).get(FX)).toEqual(before);
  });

  test('when an instrument has 0 digits, then whole prices pass and a fraction is 422', async () => {
    expectStatus(await setQuote({ symbol: IDX, bid: 100, ask: 101 }), 200);
    const res = await setQuote({ symbol: IDX, bid: 100.5, ask: 101 });
    expectStatus(res, 422);
    expect(res.body.detail[0].loc).toEqual(['body', 'bid']);
  });

  test('when prices have exactly the instrument digits, then they are kept exactly', async () => {
    const res = await setQuote({ symbol: FX, bid: 0.00001, ask: 0.00003 });
    expectStatus(res, 200);
    expect((await quotes()).get(FX)).toMatchObject({ bid: 0.00001, ask: 0.00003 });
  });

  test.each([
    // Prices are at least 0.000001 (domain/money/primitives/bounds.ts), so Pydantic's ge names the bound.
    ['bid', 0, 'greater_than_equal'],
    ['bid', -1, 'greater_than_equal'],
    ['ask', 0, 'greater_than_equal'],
    ['ask', -0.5, 'greater_than_equal'],
    ['bid', 10_000_001, 'less_than_equal'],
    ['bid', '1.1', 'float_type'],
    ['ask', null, 'float_type'],
    ['bid', undefined, 'missing'],
    ['symbol', undefined, 'missing'],
    ['symbol', 5, 'string_type'],
  ])('when %s is %j, then 422 %s at [body, field]', async (field, value, type) => {
    const body: Record<string, unknown> = { symbol: FX, bid: 1.1, ask: 1.2, [field]: value };
    if (value === undefined) delete body[field];
    expectOneValidationError(await setQuote(body), ['body', field], type);
  });

  test('when both prices are 0, then both are reported greater_than_equal', async () => {
    const res = await setQuote({ symbol: FX, bid: 0, ask: 0 });
    expectStatus(res, 422);
    expect(res.body.detail.map((d: any) => [d.loc, d.type])).toEqual([
      [['body', 'bid'], 'greater_than_equal'],
      [['body', 'ask'], 'greater_than_equal'],
    ]);
  });

  test('when the symbol is unknown (or in the wrong case), then 422 at [body, symbol] and no quote appears', async () => {
    for (const symbol of ['NOSUCH', FX.toLowerCase()]) {
      const res = await setQuote({ symbol, bid: 1, ask: 2 });
      expectStatus(res, 422);
      expect(res.body.detail).toEqual([{ loc: ['body', 'symbol'], msg: expect.any(String), type: expect.any(String) }]);
      expect((await quotes()).has(symbol)).toBe(false);
    }
  });
});

describe('DELETE /simulator/quotes/{symbol}', () => {
  test('when a quote is deleted, then 204, GET no longer lists it, and deleting again is 404', async () => {
    const symbol = await createInstrument('DEL', 2);
    expectStatus(await setQuote({ symbol, bid: 10, ask: 10.5 }), 200);
    const res = await app.request('DELETE', `/simulator/quotes/${symbol}`, { token });
    expect(res.status).toBe(204);
    expect((await quotes()).has(symbol)).toBe(false);
    expectError(await app.request('DELETE', `/simulator/quotes/${symbol}`, { token }), 404, 'NOT_FOUND');
    // Other quotes stay.
    expect((await quotes()).has(FX)).toBe(true);
  });

  test('when a symbol has never had a quote, then DELETE is 404', async () => {
    expectError(await app.request('DELETE', '/simulator/quotes/NEVERQUOTED', { token }), 404, 'NOT_FOUND');
  });
});

describe('PUT /simulator/random-walk', () => {
  test.each([
    ['enabled missing', { symbols: ['X'] }, ['body', 'enabled'], 'missing'],
    ['enabled not a boolean', { enabled: 'yes' }, ['body', 'enabled'], 'bool_type'],
    [
      'interval_ms below 250',
      { enabled: true, symbols: ['FX'], interval_ms: 249 },
      ['body', 'interval_ms'],
      'greater_than_equal',
    ],
    ['volatility_bps 0', { enabled: true, symbols: ['FX'], volatility_bps: 0 }, ['body', 'volatility_bps'], 'greater_than'],
    ['symbols empty', { enabled: true, symbols: [] }, ['body', 'symbols'], 'too_short'],
    ['symbols missing while enabling', { enabled: true }, ['body', 'symbols'], 'missing'],
  ])('when %s, then 422 and the walk stays off', async (_what, body, loc, type) => {
    const sent = JSON.parse(JSON.stringify(body).replace('"FX"', JSON.stringify(FX)));
    expectOneValidationError(await app.request('PUT', '/simulator/random-walk', { token, body: sent }), loc, type);
    expect((await app.request('GET', '/simulator/random-walk', { token })).body.enabled).toBe(false);
  });

  test('when a listed symbol is unknown, then 422 at [body, symbols, index]', async () => {
    const res = await app.request('PUT', '/simulator/random-walk', { token, body: { enabled: true, symbols: [FX, 'NOPE'] } });
    expectStatus(res, 422);
    expect(res.body.detail.map((d: any) => d.loc)).toEqual([['body', 'symbols', 1]]);
    expect((await app.request('GET', '/simulator/random-walk', { token })).body.enabled).toBe(false);
  });

  test('when turned on, then quotes move (ask above bid, at the digits, spread kept); when turned off, then they stop', async () => {
    const noQuote = await createInstrument('NQ', 4);
    expectStatus(await setQuote({ symbol: FX, bid: 1.1, ask: 1.10015 }), 200);
    expectStatus(await setQuote({ symbol: JPY, bid: 150.1, ask: 150.125 }), 200);
    const start = await quotes();

    const on = await app.request('PUT', '/simulator/random-walk', {
      token,
      body: { enabled: true, symbols: [FX, JPY, noQuote], interval_ms: 250, volatility_bps: 200 },
    });
    expectStatus(on, 200);
    expect(on.body).toEqual({ enabled: true, symbols: [FX, JPY, noQuote], interval_ms: 250, volatility_bps: 200 });
    expect((await app.request('GET', '/simulator/random-walk', { token })).body).toEqual(on.body);

    // Several ticks: each symbol with a quote moves; each step keeps the invariants.
    const seen = new Map<string, Set<number>>([
      [FX, new Set()],
      [JPY, new Set()],
    ]);
    const digits = new Map([
      [FX, 5],
      [JPY, 3],
    ]);
    await waitFor(
      'both quotes to move at least three times',
      async () => {
        const now = await quotes();
        for (const symbol of [FX, JPY]) {
          const q = now.get(symbol)!;
          expect(q.ask).toBeGreaterThan(q.bid);
          expect(q.bid).toBeGreaterThan(0);
          expect(decimalsOf(q.bid)).toBeLessThanOrEqual(digits.get(symbol)!);
          expect(decimalsOf(q.ask)).toBeLessThanOrEqual(digits.get(symbol)!);
          const startQuote = start.get(symbol)!;
          // The spread of the quote is kept (it is wider than one tick).
          expect(new D(q.ask).minus(q.bid).toNumber()).toBe(new D(startQuote.ask).minus(startQuote.bid).toNumber());
          seen.get(symbol)!.add(q.bid);
        }
        return [...seen.values()].every((s) => s.size >= 4);
      },
      15_000,
    );
    // A symbol without a quote is skipped: the walk does not invent a price.
    expect((await quotes()).has(noQuote)).toBe(false);

    const off = await app.request('PUT', '/simulator/random-walk', { token, body: { enabled: false } });
    expectStatus(off, 200);
    expect(off.body).toEqual({ enabled: false, symbols: [], interval_ms: null, volatility_bps: null });
    expect((await app.request('GET', '/simulator/random-walk', { token })).body).toEqual(off.body);

    // No schedule is left, and once a tick already taken has finished, nothing moves.
    await expectNoWalk();
    const stopped = await quotes();
    await tickAProbe();
    const later = await quotes();
    expect(later.get(FX)).toEqual(stopped.get(FX));
    expect(later.get(JPY)).toEqual(stopped.get(JPY));
  });

  test('when the walk is set again, then the new schedule replaces the old one', async () => {
    const first = { enabled: true, symbols: [FX], interval_ms: 60_000, volatility_bps: 1 };
    expectStatus(await app.request('PUT', '/simulator/random-walk', { token, body: first }), 200);
    const second = { enabled: true, symbols: [JPY, IDX], interval_ms: 120_000, volatility_bps: 7.5 };
    expectStatus(await app.request('PUT', '/simulator/random-walk', { token, body: second }), 200);
    expect((await app.request('GET', '/simulator/random-walk', { token })).body).toEqual(second);
    expectStatus(await app.request('PUT', '/simulator/random-walk', { token, body: { enabled: false } }), 200);
    expect((await app.request('GET', '/simulator/random-walk', { token })).body.enabled).toBe(false);
  });

  test('when it is turned on without interval or volatility, then the defaults are 1000 ms and 5 bps', async () => {
    const res = await app.request('PUT', '/simulator/random-walk', { token, body: { enabled: true, symbols: [IDX] } });
    expectStatus(res, 200);
    expect(res.body).toEqual({ enabled: true, symbols: [IDX], interval_ms: 1000, volatility_bps: 5 });
    expectStatus(await app.request('PUT', '/simulator/random-walk', { token, body: { enabled: false } }), 200);
  });

  test('when turned off while already off, then 200 and still off', async () => {
    const res = await app.request('PUT', '/simulator/random-walk', { token, body: { enabled: false } });
    expectStatus(res, 200);
    expect(res.body.enabled).toBe(false);
  });
});
