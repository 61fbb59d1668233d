import Decimal from 'decimal.js';
import fc from 'fast-check';
import { convertAtDealerRate, type DealerRate } from '../../../src/domain/prices/conversion';
import { adminToken, createCustomer, type LoggedIn } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, setQuote, setUpMarket, type Market } from '../../helpers/trading';
import { expectOk, openAccount } from '../trading/trading-kit';
import { accountState, expectNoOverdraft, transfer, walletOf } from './money-kit';

/**
 * Conversion cannot create money: each leg converts at the dealer side
 * (x bid, / ask) and the result is cut toward zero to the cent, so transfers back and forth
 * between currencies, of any size, never leave the customer's accounts worth more at mid
 * prices than before. Real transfers through the API, checked against the books.
 */
let app: TestApp;
let admin: string;
let market: Market;

beforeAll(async () => {
  app = await startTestApp({ label: 'conversion-round-trips', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  market = await setUpMarket(app, admin, { gbp: true });
});
afterAll(() => app?.stop());
afterEach(async () => {
  await expectLedgerBalanced(app);
  await expectNoOverdraft(app);
});

async function liveAccount(customer: LoggedIn, currency: string): Promise<number> {
  return expectOk(await openAccount(app, admin, customer.id, { kind: 'live', group_id: market.groupId, currency }), 201).login;
}

async function deposit(login: number, amount: number): Promise<void> {
  expectOk(await app.request('POST', `/api/backoffice/accounts/${login}/deposits`, { token: admin, body: { amount } }), 201);
}

const balanceOf = async (login: number) => new Decimal((await accountState(app, login)).balance);

test('when 0.05 USD goes to EUR and back 100 times at EURUSD 1.1 / 1.1001, then the customer ends with less, never more', async () => {
  await setQuote(app, admin, 'EURUSD', 1.1, 1.1001);
  const customer = await createCustomer(app, admin);
  const wallet = await walletOf(app, customer);
  const eur = await liveAccount(customer, 'EUR');
  await deposit(wallet, 10);
  for (let trip = 0; trip < 100; trip++) {
    const there = expectOk(await transfer(app, customer, wallet, eur, 0.05), 200);
    // 0.05 / 1.1001 = 0.04545...: cut to 0.04 (half-even made it 0.05, which came back as 0.06).
    expect(there).toMatchObject({ source: 'EURUSD', amount: 0.05, converted_amount: 0.04 });
    const back = expectOk(await transfer(app, customer, eur, wallet, there.converted_amount), 200);
    // 0.04 x 1.1 = 0.044: cut to 0.04.
    expect(back).toMatchObject({ source: 'EURUSD', amount: 0.04, converted_amount: 0.04, effective_rate: 1 });
  }
  expect((await balanceOf(wallet)).toFixed(2)).toBe('9.00');
  expect((await balanceOf(eur)).toFixed(2)).toBe('0.00');
  await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
});

test('when random transfers run between USD, EUR and GBP accounts at random quotes, then every one converts as the pure function says and none gains value at mid prices', async () => {
  const customer = await createCustomer(app, admin);
  const logins: Record<string, number> = {
    USD: await walletOf(app, customer),
    EUR: await liveAccount(customer, 'EUR'),
    GBP: await liveAccount(customer, 'GBP'),
  };
  for (const login of Object.values(logins)) await deposit(login, 50);
  const currencies = Object.keys(logins);

  /** A quote with bid < ask: bid 0.5 to 2 (5 digits), a spread of 1 to 50 points. */
  const quote = fc
    .tuple(fc.integer({ min: 50_000, max: 200_000 }), fc.integer({ min: 1, max: 50 }))
    .map(([bid, spread]) => ({ bid: bid / 100_000, ask: (bid + spread) / 100_000 }));
  const step = fc.record({
    from: fc.constantFrom(...currencies),
    to: fc.constantFrom(...currencies),
    // Mostly a few cents, where rounding decides; sometimes a share of the balance.
    cents: fc.oneof(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 10, max: 2000 })),
  });

  let transfers = 0;
  await fc.assert(
    fc.asyncProperty(quote, quote, fc.array(step, { minLength: 1, maxLength: 8 }), async (eurusd, gbpusd, steps) => {
      await setQuote(app, admin, 'EURUSD', eurusd.bid, eurusd.ask);
      await setQuote(app, admin, 'GBPUSD', gbpusd.bid, gbpusd.ask);
      const mids: Record<string, Decimal> = {
        USD: new Decimal(1),
        EUR: new Decimal(eurusd.bid).plus(eurusd.ask).div(2),
        GBP: new Decimal(gbpusd.bid).plus(gbpusd.ask).div(2),
      };
      // Each leg at its dealer side: XUSD x bid, USDX / ask, crossed through USD.
      const toUsd: Record<string, DealerRate> = {
        USD: { multiplier: new Decimal(1), divisor: new Decimal(1), source: '' },
        EUR: { multiplier: new Decimal(String(eurusd.bid)), divisor: new Decimal(1), source: 'EURUSD' },
        GBP: { multiplier: new Decimal(String(gbpusd.bid)), divisor: new Decimal(1), source: 'GBPUSD' },
      };
      const fromUsd: Record<string, DealerRate> = {
        USD: { multiplier: new Decimal(1), divisor: new Decimal(1), source: '' },
        EUR: { multiplier: new Decimal(1), divisor: new Decimal(String(eurusd.ask)), source: 'EURUSD' },
        GBP: { multiplier: new Decimal(1), divisor: new Decimal(String(gbpusd.ask)), source: 'GBPUSD' },
      };
      const worth = async () => {
        let total = new Decimal(0);
        for (const c of currencies) total = total.plus((await balanceOf(logins[c]!)).times(mids[c]!));
        return total;
      };
      let before = await worth();
      for (const s of steps) {
        if (s.from === s.to) continue;
        const amount = new Decimal(s.cents).div(100);
        const res = await transfer(app, customer, logins[s.from]!, logins[s.to]!, amount.toNumber());
        if (res.status === 422) continue; // not enough left, or converts to less than a cent
        const body = expectOk(res, 200);
        transfers++;
        const rate: DealerRate = {
          multiplier: toUsd[s.from]!.multiplier.times(fromUsd[s.to]!.multiplier),
          divisor: toUsd[s.from]!.divisor.times(fromUsd[s.to]!.divisor),
          source: '',
        };
        expect(body.converted_amount).toBe(convertAtDealerRate(amount, rate).toNumber());
        const after = await worth();
        expect(after.lte(before)).toBe(true);
        before = after;
      }
    }),
    { seed: 2311, numRuns: 12 },
  );
  // The property ran on real transfers, not only on refusals.
  expect(transfers).toBeGreaterThan(20);
  await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
}, 60_000);
