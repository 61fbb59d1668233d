import Decimal from 'decimal.js';
import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, type TestApp, type TestResponse } from '../../helpers/test-app';
import { scaled } from '../../helpers/test-scale';
import { expectLedgerBalanced, setQuote, setUpMarket, type Market } from '../../helpers/trading';
import { expectOk, openAccount } from '../trading/trading-kit';
import { decide, expectNoOverdraft, sum, transfer, walletOf, withdraw } from './money-kit';

/**
 * The Jepsen "bank" workload through the HTTP API: customers with several accounts, a few
 * thousand random transfers, deposits, withdrawal requests and decisions, all concurrent,
 * then the books are checked against what the clients were told:
 *   - every balance equals the sum of its ledger rows, none is negative, no wallet reserves
 *     more than it holds, and each wallet reserves exactly its pending withdrawals;
 *   - money is conserved to the cent: per currency, the balances add up to the deposits, less
 *     the completed withdrawals, less what transfers took out, plus what they put in;
 *   - every transfer a client was told about is booked once, as told, and nothing else is;
 *     its two legs are -amount and +converted_amount, and converted_amount is amount x the
 *     recorded rate rounded toward zero, at quotes that were really set;
 *   - every payout of a prop account's profit is booked as told; an approved one debits the
 *     prop account and credits the wallet amount x its recorded rate, rounded toward zero;
 *   - no conversion credits more than the amount debited is worth at its recorded dealer rate.
 * The operations are drawn from a seeded generator (BANK_SEED to replay a mix); the
 * interleaving is whatever the machine makes of 16 clients at once. TEST_SCALE=0.2 runs a
 * fifth of the operations (CI runs them all).
 */
const SEED = Number(process.env.BANK_SEED ?? 20261123);
const CLIENTS = 16;
/** Each prop account's first deposit: its starting balance, never payable. */
const PROP_START = 1000;
// Below a few hundred operations the mix may lack a refusal or a lost race.
const ONE_CURRENCY_OPERATIONS = scaled(3000, 400);
const MANY_CURRENCY_OPERATIONS = scaled(2000, 400);
const Wide = Decimal.clone({ precision: 120, rounding: Decimal.ROUND_DOWN });

let app: TestApp;
let admin: string;
let approver: LoggedIn;
let market: Market;

/** mulberry32: small, seeded, good enough to pick operations. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Holder {
  customer: LoggedIn;
  /** The wallet and live accounts, between which transfers move money. */
  logins: number[];
  /** A prop account funded with its starting balance: deposits into it are profit to pay out. */
  prop: number;
}

interface Ledger {
  deposits: Map<string, Decimal>;
  /** Transfers the API answered 200 for, by transfer_out_id. */
  transfers: Map<string, Record<string, any>>;
  /** Withdrawals accepted (202), by id, and how staff decided them (200 answers). */
  withdrawals: Map<string, { amount: string; currency: string; decided?: 'completed' | 'rejected' }>;
  pending: string[];
  /** Payouts requested (201), by id, and how staff decided them (200 answers). */
  payouts: Map<string, { login: number; amount: string; currency: string; decided?: 'approved' | 'rejected' }>;
  pendingPayouts: string[];
  /** Every answer's status, by operation. */
  statuses: Map<string, number[]>;
}

function note(ledger: Ledger, op: string, res: TestResponse, allowed: number[]): void {
  const list = ledger.statuses.get(op) ?? [];
  list.push(res.status);
  ledger.statuses.set(op, list);
  if (!allowed.includes(res.status)) throw new Error(`${op} answered ${res.status}: ${res.text}`);
}

const cents = (rand: () => number, max: number) => Math.max(1, Math.floor(rand() * max * 100)) / 100;

async function runWorkload(
  holders: Holder[],
  currencyOf: Map<number, string>,
  operations: number,
  rand: () => number,
  extra?: () => Promise<void>,
): Promise<Ledger> {
  const ledger: Ledger = {
    deposits: new Map(),
    transfers: new Map(),
    withdrawals: new Map(),
    pending: [],
    payouts: new Map(),
    pendingPayouts: [],
    statuses: new Map(),
  };
  // The props' starting balances, deposited when they were opened.
  for (const h of holders) {
    const currency = currencyOf.get(h.prop)!;
    ledger.deposits.set(currency, (ledger.deposits.get(currency) ?? new Decimal(0)).plus(PROP_START));
  }
  const plan = Array.from({ length: operations }, () => rand());
  let next = 0;

  const step = async (pick: number, r: () => number): Promise<void> => {
    const holder = holders[Math.floor(r() * holders.length)]!;
    if (pick < 0.58) {
      const from = holder.logins[Math.floor(r() * holder.logins.length)]!;
      const others = holder.logins.filter((l) => l !== from);
      const to = others[Math.floor(r() * others.length)]!;
      const amount = cents(r, currencyOf.get(from) === 'JPY' ? 20_000 : 150);
      // One transfer in twenty is a client retrying with the same key at once: it must move money once.
      if (r() < 0.05) {
        const key = `bank-${Math.floor(r() * 1e12)}`;
        const pair = await Promise.all([
          transfer(app, holder.customer, from, to, amount, key),
          transfer(app, holder.customer, from, to, amount, key),
        ]);
        for (const res of pair) note(ledger, 'transfer (retried)', res, [200, 409, 422]);
        const done = pair.filter((res) => res.status === 200);
        if (done.length === 2) expect(done[0]!.body).toEqual(done[1]!.body);
        if (done[0]) ledger.transfers.set(done[0].body.transfer_out_id, done[0].body);
        return;
      }
      const res = await transfer(app, holder.customer, from, to, amount);
      note(ledger, 'transfer', res, [200, 422]);
      if (res.status === 200) ledger.transfers.set(res.body.transfer_out_id, res.body);
    } else if (pick < 0.7) {
      // One deposit in five is the prop account's profit, which payouts then draw on.
      const login = r() < 0.2 ? holder.prop : holder.logins[Math.floor(r() * holder.logins.length)]!;
      const amount = cents(r, currencyOf.get(login) === 'JPY' ? 50_000 : 300);
      const res = await app.request('POST', `/api/backoffice/accounts/${login}/deposits`, { token: admin, body: { amount } });
      note(ledger, 'deposit', res, [201]);
      const currency = currencyOf.get(login)!;
      ledger.deposits.set(currency, (ledger.deposits.get(currency) ?? new Decimal(0)).plus(res.body.amount));
    } else if (pick < 0.8) {
      const res = await withdraw(app, holder.customer, cents(r, 200));
      note(ledger, 'withdraw', res, [202, 422]);
      if (res.status === 202) {
        ledger.withdrawals.set(res.body.transaction_id, { amount: res.body.amount, currency: res.body.currency });
        ledger.pending.push(res.body.transaction_id);
      }
    } else if (pick < 0.87) {
      const res = await app.request('POST', '/prop/payouts', {
        token: holder.customer.token,
        body: { login: holder.prop, amount: cents(r, currencyOf.get(holder.prop) === 'JPY' ? 30_000 : 200) },
      });
      note(ledger, 'payout', res, [201, 422]);
      if (res.status === 201) {
        ledger.payouts.set(res.body.id, { login: holder.prop, amount: res.body.amount, currency: res.body.currency });
        ledger.pendingPayouts.push(res.body.id);
      }
    } else if (pick < 0.92) {
      if (ledger.pendingPayouts.length === 0) return;
      // Not removed from the list: a later pick may decide it again and must get 409.
      const id = ledger.pendingPayouts[Math.floor(r() * ledger.pendingPayouts.length)]!;
      const how = r() < 0.7 ? 'approve' : 'reject';
      const res = await app.request('POST', `/prop/payouts/${id}/${how}`, {
        token: approver.token,
        body: how === 'reject' ? { reason: 'Consistency rule' } : undefined,
      });
      note(ledger, 'decide payout', res, [200, 409]);
      if (res.status === 200) {
        const p = ledger.payouts.get(id)!;
        if (p.decided) throw new Error(`payout ${id} was decided twice: ${p.decided}, then ${res.body.status}`);
        p.decided = res.body.status;
      }
    } else {
      if (ledger.pending.length === 0) return;
      // Not removed from the list: a later pick may decide it again and must get 409.
      const id = ledger.pending[Math.floor(r() * ledger.pending.length)]!;
      const how = r() < 0.6 ? 'approve' : 'reject';
      const res = await decide(app, approver.token, id, how);
      note(ledger, `decide`, res, [200, 409]);
      if (res.status === 200) {
        const w = ledger.withdrawals.get(id)!;
        if (w.decided) throw new Error(`withdrawal ${id} was decided twice: ${w.decided}, then ${res.body.status}`);
        w.decided = res.body.status;
      }
    }
  };

  const client = async (n: number): Promise<void> => {
    const r = generator(SEED * 31 + n);
    while (next < plan.length) await step(plan[next++]!, r);
  };
  let running = true;
  const side = extra
    ? (async () => {
        while (running) await extra();
      })()
    : Promise.resolve();
  try {
    await Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n)));
  } finally {
    running = false;
    await side;
  }
  return ledger;
}

/**
 * A conversion never credits more than the amount debited is worth at its recorded dealer rate
 * (product of the bids over product of the asks), and credits exactly that worth cut toward
 * zero to the cent: rounding can only cost the customer, so no sequence of them makes money.
 */
function expectFairConversion(debited: string, credited: string, multiplier: string, divisor: string): void {
  const worth = new Wide(debited).times(multiplier).div(divisor);
  expect(new Wide(credited).lte(worth)).toBe(true);
  expect(credited).toBe(worth.toDecimalPlaces(2, Decimal.ROUND_DOWN).toFixed(2));
}

/** The checks every run ends with. */
async function checkBooks(holders: Holder[], currencyOf: Map<number, string>, ledger: Ledger): Promise<void> {
  await expectLedgerBalanced(app);
  await expectNoOverdraft(app);
  expect(app.logs.filter((l) => l.msg === 'unhandled error')).toEqual([]);
  const logins = holders.flatMap((h) => [...h.logins, h.prop]);

  // Each wallet reserves exactly its pending withdrawals, each prop account its pending payouts.
  const reserves = await sql<{ login: string; reserved: string; pending: string }>(
    app,
    `select a.login::text as login, a.reserved::text as reserved,
            (coalesce((select sum(w.amount) from withdrawals w where w.account_id = a.id and w.status = 'pending'), 0)
             + coalesce((select sum(p.amount) from payouts p where p.account_id = a.id and p.status = 'pending'), 0))::numeric(38,2)::text as pending
       from accounts a where a.login in (?)`,
    [logins],
  );
  for (const r of reserves) expect(r.reserved).toBe(r.pending);

  // What the clients were told about withdrawals is what the table says.
  const stored = await sql<{ id: string; status: string; amount: string }>(
    app,
    'select id, status, amount::text as amount from withdrawals where login in (?)',
    [logins],
  );
  expect(stored).toHaveLength(ledger.withdrawals.size);
  for (const w of stored) {
    const told = ledger.withdrawals.get(w.id);
    expect(told).toBeDefined();
    expect(w.amount).toBe(told!.amount);
    expect(w.status).toBe(told!.decided ?? 'pending');
  }

  // Every transfer told is booked once, as told, and nothing else is.
  const records = await sql<Record<string, string>>(
    app,
    `select t.id, t.transfer_in_id, t.from_login::text as from_login, t.to_login::text as to_login, t.amount::text as amount,
            t.converted_amount::text as converted_amount, t.from_currency, t.to_currency, t.source,
            t.rate_multiplier::text as rate_multiplier, t.rate_divisor::text as rate_divisor,
            o.amount::text as out_leg, o.account_id as out_account, i.amount::text as in_leg, i.account_id as in_account,
            fa.id as from_account, ta.id as to_account
       from transfers t
       join ledger_entries o on o.id = t.id and o.kind = 'transfer_out' and o.reference_id = t.id::text
       join ledger_entries i on i.id = t.transfer_in_id and i.kind = 'transfer_in' and i.reference_id = t.id::text
       join accounts fa on fa.login = t.from_login join accounts ta on ta.login = t.to_login
      where t.from_login in (?)`,
    [logins],
  );
  expect(records).toHaveLength(ledger.transfers.size);
  const legRows = await sql<{ n: string }>(
    app,
    `select count(*)::text as n from ledger_entries l join accounts a on a.id = l.account_id
      where a.login in (?) and l.reference_type = 'transfer'`,
    [logins],
  );
  expect(Number(legRows[0]!.n)).toBe(2 * records.length);
  for (const t of records) {
    const told = ledger.transfers.get(t.id!);
    expect(told).toBeDefined();
    expect(told).toMatchObject({
      transfer_in_id: t.transfer_in_id,
      from_login: t.from_login,
      to_login: t.to_login,
      amount: Number(t.amount),
      converted_amount: Number(t.converted_amount),
      from_currency: t.from_currency,
      to_currency: t.to_currency,
      source: t.source,
      status: 'completed',
    });
    expect(t.out_account).toBe(t.from_account);
    expect(t.in_account).toBe(t.to_account);
    expect(t.out_leg).toBe(new Decimal(t.amount!).neg().toFixed(2));
    expect(t.in_leg).toBe(t.converted_amount);
    expectFairConversion(t.amount!, t.converted_amount!, t.rate_multiplier!, t.rate_divisor!);
    expect(told!.effective_rate).toBeCloseTo(Number(t.converted_amount) / Number(t.amount), 12);
  }

  // Every payout told is recorded as told; an approved one is booked once, converted at its recorded rate.
  const storedPayouts = await sql<Record<string, any>>(
    app,
    `select p.id, p.login::text as login, p.amount::text as amount, p.currency, p.status, p.wallet_amount::text as wallet_amount,
            p.wallet_currency, p.rate_multiplier::text as rate_multiplier, p.rate_divisor::text as rate_divisor,
            (select json_agg(json_build_object('login', a.login::text, 'amount', l.amount::text) order by l.seq)
               from ledger_entries l join accounts a on a.id = l.account_id
              where l.reference_type = 'payout' and l.reference_id = p.id::text) as legs
       from payouts p where p.login in (?)`,
    [holders.map((h) => h.prop)],
  );
  expect(storedPayouts).toHaveLength(ledger.payouts.size);
  const approvedPayouts = storedPayouts.filter((p) => p.status === 'approved');
  for (const p of storedPayouts) {
    const told = ledger.payouts.get(p.id);
    expect(told).toBeDefined();
    expect(p).toMatchObject({ login: String(told!.login), amount: told!.amount, currency: told!.currency });
    expect(p.status).toBe(told!.decided ?? 'pending');
    if (p.status !== 'approved') {
      expect(p.legs).toBeNull();
      continue;
    }
    const wallet = holders.find((h) => h.prop === Number(p.login))!.logins[0]!;
    expect(p.legs).toEqual([
      { login: p.login, amount: new Decimal(p.amount).neg().toFixed(2) },
      { login: String(wallet), amount: p.wallet_amount },
    ]);
    expect(p.wallet_currency).toBe(currencyOf.get(wallet));
    expectFairConversion(p.amount, p.wallet_amount, p.rate_multiplier, p.rate_divisor);
  }

  // Conservation, per currency, to the cent.
  const balances = await sql<{ login: string; currency: string; balance: string }>(
    app,
    'select login::text as login, currency, balance::text as balance from accounts where login in (?)',
    [logins],
  );
  for (const b of balances) {
    expect(currencyOf.get(Number(b.login))).toBe(b.currency);
    expect(new Decimal(b.balance).gte(0)).toBe(true);
  }
  const currencies = [...new Set(currencyOf.values())];
  for (const currency of currencies) {
    const held = sum(balances.filter((b) => b.currency === currency).map((b) => b.balance));
    const paidOut = sum(
      [...ledger.withdrawals.values()].filter((w) => w.decided === 'completed' && w.currency === currency).map((w) => w.amount),
    );
    const out = sum(records.filter((t) => t.from_currency === currency).map((t) => t.amount!));
    const into = sum(records.filter((t) => t.to_currency === currency).map((t) => t.converted_amount!));
    const propsPaid = sum(approvedPayouts.filter((p) => p.currency === currency).map((p) => p.amount));
    const walletsGot = sum(approvedPayouts.filter((p) => p.wallet_currency === currency).map((p) => p.wallet_amount));
    const deposited = ledger.deposits.get(currency) ?? new Decimal(0);
    expect(held.toFixed(2)).toBe(deposited.minus(paidOut).minus(out).plus(into).minus(propsPaid).plus(walletsGot).toFixed(2));
  }
}

beforeAll(async () => {
  app = await startTestApp({ label: 'bank', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  market = await setUpMarket(app, admin, { gbp: true });
  approver = await createStaff(app, ['approve_withdrawals', 'manage_payouts'], admin);
});
afterAll(() => app?.stop());

/** `count` customers, each with a wallet, live accounts in `currencies` and a prop account (in `propCurrencies`, by turns). */
async function holdersWith(
  count: number,
  currencies: string[],
  propCurrencies: string[],
): Promise<{ holders: Holder[]; currencyOf: Map<number, string> }> {
  const holders: Holder[] = [];
  const currencyOf = new Map<number, string>();
  for (let i = 0; i < count; i++) {
    const customer = await createCustomer(app, admin);
    const wallet = await walletOf(app, customer);
    currencyOf.set(wallet, 'USD');
    const logins = [wallet];
    for (const currency of currencies) {
      const login = expectOk(
        await openAccount(app, admin, customer.id, { kind: 'live', group_id: market.groupId, currency }),
        201,
      ).login;
      currencyOf.set(login, currency);
      logins.push(login);
    }
    const propCurrency = propCurrencies[i % propCurrencies.length]!;
    const prop = expectOk(
      await openAccount(app, admin, customer.id, { kind: 'prop', group_id: market.groupId, currency: propCurrency }),
      201,
    ).login;
    currencyOf.set(prop, propCurrency);
    expectOk(
      await app.request('POST', `/api/backoffice/accounts/${prop}/deposits`, { token: admin, body: { amount: PROP_START } }),
      201,
    );
    holders.push({ customer, logins, prop });
  }
  return { holders, currencyOf };
}

test(`when ${ONE_CURRENCY_OPERATIONS.toLocaleString('en')} random transfers, deposits, withdrawals, payouts and decisions run at once in one currency, then the books balance to the cent`, async () => {
  const { holders, currencyOf } = await holdersWith(3, ['USD', 'USD'], ['USD']);
  const ledger = await runWorkload(holders, currencyOf, ONE_CURRENCY_OPERATIONS, generator(SEED));
  // The mix really happened: plenty of each outcome, including refusals and lost races.
  expect(ledger.transfers.size).toBeGreaterThan(Math.round((ONE_CURRENCY_OPERATIONS * 800) / 3000));
  expect(ledger.statuses.get('transfer')).toContain(422);
  expect(ledger.statuses.get('withdraw')).toContain(202);
  expect(ledger.statuses.get('decide')).toContain(409);
  expect([...ledger.withdrawals.values()].some((w) => w.decided === 'completed')).toBe(true);
  expect([...ledger.withdrawals.values()].some((w) => w.decided === 'rejected')).toBe(true);
  expect([...ledger.payouts.values()].some((p) => p.decided === 'approved')).toBe(true);
  expect([...ledger.payouts.values()].some((p) => p.decided === 'rejected')).toBe(true);
  expect(ledger.statuses.get('decide payout')).toContain(409);
  await checkBooks(holders, currencyOf, ledger);
  for (const t of ledger.transfers.values()) expect(t).toMatchObject({ source: 'identity', effective_rate: 1 });
}, 240_000);

test(`when ${MANY_CURRENCY_OPERATIONS.toLocaleString('en')} operations run across USD, EUR, JPY and GBP accounts while the quotes move, then every transfer and payout keeps its recorded rate, credits no more than the debit is worth at it, and each currency balances`, async () => {
  const { holders, currencyOf } = await holdersWith(3, ['EUR', 'JPY', 'GBP'], ['EUR', 'GBP', 'JPY']);
  const rand = generator(SEED + 1);
  const set: Record<string, Array<{ bid: string; ask: string }>> = {
    EURUSD: [{ bid: '1.1', ask: '1.1002' }],
    USDJPY: [{ bid: '150', ask: '150.02' }],
    GBPUSD: [{ bid: '1.25', ask: '1.2503' }],
  };
  const mids: Record<string, number> = { EURUSD: 1.1, USDJPY: 150, GBPUSD: 1.25 };
  const digits: Record<string, number> = { EURUSD: 5, USDJPY: 3, GBPUSD: 5 };
  const moveQuotes = async () => {
    for (const symbol of Object.keys(mids)) {
      const mid = mids[symbol]! * (1 + (rand() - 0.5) * 0.002);
      const bid = Number(mid.toFixed(digits[symbol]));
      const ask = Number((bid + Number(`1e-${digits[symbol]}`) * (1 + Math.floor(rand() * 30))).toFixed(digits[symbol]));
      await setQuote(app, admin, symbol, bid, ask);
      set[symbol]!.push({ bid: String(bid), ask: String(ask) });
    }
    // Paced: a few moves a second, like a feed, not a tight loop competing with the clients.
    await new Promise((r) => setTimeout(r, 50));
  };
  const ledger = await runWorkload(holders, currencyOf, MANY_CURRENCY_OPERATIONS, rand, moveQuotes);
  expect(ledger.transfers.size).toBeGreaterThan(Math.round((MANY_CURRENCY_OPERATIONS * 500) / 2000));
  expect([...ledger.payouts.values()].filter((p) => p.decided === 'approved').length).toBeGreaterThan(
    Math.round((MANY_CURRENCY_OPERATIONS * 10) / 2000),
  );
  await checkBooks(holders, currencyOf, ledger);

  // Every rate is made of quotes that were really set, on the dealer's side of each leg.
  const bids = (s: string) => new Set(set[s]!.map((q) => new Decimal(q.bid).toFixed()));
  const asks = (s: string) => new Set(set[s]!.map((q) => new Decimal(q.ask).toFixed()));
  const records = await sql<{ from_currency: string; to_currency: string; source: string; m: string; d: string }>(
    app,
    `select from_currency, to_currency, source, rate_multiplier::text as m, rate_divisor::text as d from transfers where customer_id in (?)
     union all
     select currency, wallet_currency, rate_source, rate_multiplier::text, rate_divisor::text from payouts
      where customer_id in (?) and status = 'approved'`,
    [holders.map((h) => h.customer.id), holders.map((h) => h.customer.id)],
  );
  const sources = new Set<string>();
  for (const t of records) {
    sources.add(t.source);
    const legs = t.source === 'identity' ? [] : t.source.split(',');
    let multipliers = [new Decimal(1)];
    let divisors = [new Decimal(1)];
    let currency = t.from_currency;
    for (const symbol of legs) {
      const base = symbol.slice(0, 3);
      if (base === currency) {
        multipliers = multipliers.flatMap((m) => [...bids(symbol)].map((b) => m.times(b)));
        currency = symbol.slice(3);
      } else {
        divisors = divisors.flatMap((d) => [...asks(symbol)].map((a) => d.times(a)));
        currency = base;
      }
    }
    expect(currency).toBe(t.to_currency);
    expect(multipliers.some((m) => m.eq(t.m))).toBe(true);
    expect(divisors.some((d) => d.eq(t.d))).toBe(true);
  }
  // Direct, inverted and crossed paths all ran.
  for (const s of ['EURUSD', 'USDJPY', 'GBPUSD', 'EURUSD,USDJPY', 'USDJPY,EURUSD', 'GBPUSD,EURUSD', 'GBPUSD,USDJPY'])
    expect([...sources]).toContain(s);
}, 240_000);
