import type { EntityManager } from '@mikro-orm/postgresql';
import { rolloverPassedToday, runEod } from '../eod/eod-kit';
import { failChallenge, passChallengeIfDue, takeDayStartEquities } from '../../../src/domain/prop/challenge-decisions';
import type { ChallengeRow } from '../../../src/domain/prop/challenge-equity';
import { ACTIVE_CHALLENGES_OF_ACCOUNTS } from '../../../src/domain/prop/prop.queries';
import { executeNamed } from '../../../src/db/bound-statement';
import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, setQuote, setUpMarket, type Market } from '../../helpers/trading';
import { walletOf } from '../money/money-kit';
import { eventsOf, expect422, expectError, expectOk, ledgerOf } from '../trading/trading-kit';
import { settled } from '../trading/engine-kit';

/**
 * Prop challenges: programs, stages on their own funded accounts, the
 * loss rules on every tick and the pass after closes, evaluated by the workers; a breach closes
 * everything once, and the funded stage pays out the program's share.
 */
jest.setTimeout(120_000);

let app: TestApp;
let admin: string;
let market: Market;

const CHALLENGE_FIELDS = [
  'created_at',
  'customer_id',
  'day_start_equity',
  'failure',
  'high_water_mark',
  'id',
  'login',
  'phase',
  'program_id',
  'status',
  'trading_days',
];

interface PhaseIn {
  name?: string;
  profit_target_pct?: number;
  max_daily_loss_pct?: number;
  max_total_loss_pct?: number;
  total_loss_mode?: 'static' | 'trailing';
  min_trading_days?: number;
  max_trading_days?: number | null;
}

function phase(p: PhaseIn = {}): Required<PhaseIn> {
  return {
    name: 'Evaluation',
    profit_target_pct: 10,
    max_daily_loss_pct: 5,
    max_total_loss_pct: 10,
    total_loss_mode: 'static',
    min_trading_days: 0,
    max_trading_days: null,
    ...p,
  };
}

function programBody(phases: unknown[], extra: Record<string, unknown> = {}) {
  return {
    name: `Program ${Math.random().toString(36).slice(2, 8)}`,
    currency: 'USD',
    initial_balance: 10000,
    group_id: market.groupId,
    profit_split_pct: 80,
    phases,
    ...extra,
  };
}

async function program(phases: PhaseIn[], extra: Record<string, unknown> = {}): Promise<string> {
  const body = expectOk(
    await app.request('POST', '/prop/programs', { token: admin, body: programBody(phases.map(phase), extra) }),
    201,
  );
  return body.id as string;
}

async function start(programId: string, customer?: LoggedIn) {
  const who = customer ?? (await createCustomer(app, admin));
  const view = expectOk(
    await app.request('POST', '/prop/challenges', { token: admin, body: { program_id: programId, customer_id: who.id } }),
    201,
  );
  return { customer: who, challenge: view, login: view.login as number };
}

async function challenge(id: string) {
  return expectOk(await app.request('GET', `/prop/challenges/${id}`, { token: admin }), 200);
}

async function buy(token: string, login: number, volume = 1): Promise<number> {
  return expectOk(await app.request('POST', '/orders', { token, body: { login, symbol: 'EURUSD', cmd: 0, volume } }), 201)
    .order as number;
}

async function openOrders(login: number): Promise<number> {
  const rows = await sql<{ n: string }>(
    app,
    `select count(*) as n from orders o join accounts a on a.id = o.account_id where a.login = ? and o.status = 'open'`,
    [login],
  );
  return Number(rows[0]!.n);
}

async function waitForStatus(id: string, status: string, timeoutMs = 15_000) {
  return waitFor(
    `challenge ${id} ${status}`,
    async () => {
      const c = await challenge(id);
      return c.status === status ? c : null;
    },
    timeoutMs,
  );
}

beforeAll(async () => {
  app = await startTestApp({ label: 'prop-challenges' });
  admin = await adminToken(app);
  market = await setUpMarket(app, admin);
});
afterAll(() => app?.stop());
beforeEach(async () => setQuote(app, admin, 'EURUSD', 1.1, 1.1002));
afterEach(() => expectLedgerBalanced(app));

describe('programs', () => {
  test('when staff create a program, then 201 with its phases, and it is listed', async () => {
    const body = expectOk(
      await app.request('POST', '/prop/programs', {
        token: admin,
        body: programBody([phase(), phase({ name: 'Verification', total_loss_mode: 'trailing', max_trading_days: 60 })]),
      }),
      201,
    );
    expect(body).toMatchObject({ currency: 'USD', initial_balance: '10000.00', profit_split_pct: 80, group_id: market.groupId });
    expect(body.phases).toHaveLength(2);
    expect(body.phases[1]).toMatchObject({ name: 'Verification', total_loss_mode: 'trailing', max_trading_days: 60 });
    const list = expectOk(await app.request('GET', '/prop/programs?page_size=200', { token: admin }), 200);
    expect(list.items.map((p: { id: string }) => p.id)).toContain(body.id);
  });

  test.each([
    ['a target of 0', [phase({ profit_target_pct: 0 })], ['body', 'phases', 0, 'profit_target_pct']],
    ['a target over 1000 %', [phase({ profit_target_pct: 1000.01 })], ['body', 'phases', 0, 'profit_target_pct']],
    ['a negative daily loss', [phase({ max_daily_loss_pct: -1 })], ['body', 'phases', 0, 'max_daily_loss_pct']],
    ['a daily loss over 100 %', [phase({ max_daily_loss_pct: 101 })], ['body', 'phases', 0, 'max_daily_loss_pct']],
    ['a total loss over 100 %', [phase(), phase({ max_total_loss_pct: 100.5 })], ['body', 'phases', 1, 'max_total_loss_pct']],
    ['no phases', [], ['body', 'phases']],
    ['a bad loss mode', [{ ...phase(), total_loss_mode: 'sliding' }], ['body', 'phases', 0, 'total_loss_mode']],
  ])('when a program has %s, then 422 at the field and nothing is created', async (_what, phases, loc) => {
    const before = await sql<{ n: string }>(app, 'select count(*) as n from prop_programs');
    expect422(await app.request('POST', '/prop/programs', { token: admin, body: programBody(phases) }), loc);
    expect(await sql<{ n: string }>(app, 'select count(*) as n from prop_programs')).toEqual(before);
  });

  test('when the group does not exist, then 422 at group_id', async () => {
    expect422(
      await app.request('POST', '/prop/programs', {
        token: admin,
        body: programBody([phase()], { group_id: '00000000-0000-4000-8000-000000000000' }),
      }),
      ['body', 'group_id'],
    );
  });

  test('when the caller lacks manage_prop, or is a customer, then 403', async () => {
    const clerk = await createStaff(app, ['view_customers'], admin);
    expectError(await app.request('GET', '/prop/programs', { token: clerk.token }), 403, 'FORBIDDEN');
    const customer = await createCustomer(app, admin);
    expectError(
      await app.request('POST', '/prop/programs', { token: customer.token, body: programBody([phase()]) }),
      403,
      'FORBIDDEN',
    );
  });
});

describe('starting a challenge', () => {
  test('when staff start one, then phase 1 is active on a new prop account funded through the ledger, seen by staff and the trader', async () => {
    const id = await program([phase()]);
    const { customer, challenge: view, login } = await start(id);
    expect(Object.keys(view).sort()).toEqual(CHALLENGE_FIELDS);
    expect(view).toMatchObject({
      program_id: id,
      customer_id: customer.id,
      phase: 1,
      status: 'active',
      day_start_equity: '10000.00',
      high_water_mark: '10000.00',
      trading_days: 0,
      failure: null,
    });
    const account = expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token: admin }), 200);
    expect(account).toMatchObject({ kind: 'prop', balance: '10000.00', currency: 'USD', group_id: market.groupId });
    const ledger = await ledgerOf(app, login);
    expect(ledger.map((r) => [r.kind, r.amount])).toEqual([['challenge_funding', '10000.00']]);
    expect(await challenge(view.id)).toMatchObject(view);
    const mine = expectOk(await app.request('GET', '/customers/me/challenges', { token: customer.token }), 200);
    expect(mine.items).toEqual([view]);
  });

  test('when the customer or the program does not exist, then 422 at the field and no account opens', async () => {
    const id = await program([phase()]);
    const before = await sql<{ n: string }>(app, `select count(*) as n from accounts where kind = 'prop'`);
    expect422(
      await app.request('POST', '/prop/challenges', {
        token: admin,
        body: { program_id: id, customer_id: '00000000-0000-4000-8000-000000000000' },
      }),
      ['body', 'customer_id'],
    );
    const customer = await createCustomer(app, admin);
    expect422(
      await app.request('POST', '/prop/challenges', {
        token: admin,
        body: { program_id: '00000000-0000-4000-8000-000000000000', customer_id: customer.id },
      }),
      ['body', 'program_id'],
    );
    expect(await sql<{ n: string }>(app, `select count(*) as n from accounts where kind = 'prop'`)).toEqual(before);
    expectError(
      await app.request('GET', '/prop/challenges/00000000-0000-4000-8000-000000000000', { token: admin }),
      404,
      'NOT_FOUND',
    );
  });
});

describe('the loss rules on ticks', () => {
  test('when a quote takes equity below the daily floor, then within a second everything closes (prop_breach), trading stops and the failure is recorded once', async () => {
    const id = await program([phase({ max_daily_loss_pct: 5, max_total_loss_pct: 10 })]);
    const { customer, challenge: view, login } = await start(id);
    const tickets = [await buy(customer.token, login), await buy(customer.token, login, 0.5)];
    // 1.5 lots bought at 1.1002; at bid 1.0962 equity is 10000 - 600 = 9400 < 9500 (daily), > 9000 (total).
    const quotedAt = Date.now();
    await setQuote(app, admin, 'EURUSD', 1.0962, 1.0964);
    const failed = await waitForStatus(view.id, 'failed');
    expect(failed.failure).toEqual({
      rule: 'daily_loss',
      threshold: '9500.00',
      equity: '9400.00',
      balance: '10000.00',
      at: expect.any(String),
    });
    expect(Date.parse(failed.failure.at) - quotedAt).toBeLessThan(1000);
    await waitFor('every order closed', async () => (await openOrders(login)) === 0);
    const closed = await sql<{ ticket: string; close_reason: string }>(
      app,
      `select ticket, close_reason from orders where ticket in (?) order by ticket`,
      [tickets.map(String)],
    );
    expect(closed.map((o) => o.close_reason)).toEqual(['prop_breach', 'prop_breach']);
    expectError(
      await app.request('POST', '/orders', { token: customer.token, body: { login, symbol: 'EURUSD', cmd: 0, volume: 0.1 } }),
      403,
      'TRADING_DISABLED',
    );
    const events = await eventsOf(app, 'prop.challenge_failed', view.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({ id: view.id, status: 'failed', login, failure: { rule: 'daily_loss' } });
    // A later tick, once evaluated, decides nothing more.
    await setQuote(app, admin, 'EURUSD', 1.09, 1.0902);
    await settled(app, 'EURUSD');
    expect(await eventsOf(app, 'prop.challenge_failed', view.id)).toHaveLength(1);
    const notes = await waitFor('the failure notification', async () => {
      const page = expectOk(await app.request('GET', '/customers/me/notifications', { token: customer.token }), 200);
      return page.items.find((n: { type: string }) => n.type === 'prop.challenge_failed');
    });
    expect(notes.body).toContain('daily loss limit');
    expect(notes.body).not.toContain('daily_loss');
    await waitFor('the failure mail', async () => {
      const rows = await sql(app, `select 1 from mail_messages where template = 'prop_challenge_failed' and to_address = ?`, [
        customer.email,
      ]);
      return rows.length === 1;
    });
  });

  test('when the mode is trailing, then the high-water mark follows equity up, never down, and a fall below it less the loss fails the stage', async () => {
    const id = await program([phase({ max_daily_loss_pct: 50, max_total_loss_pct: 5, total_loss_mode: 'trailing' })]);
    const { customer, challenge: view, login } = await start(id);
    await buy(customer.token, login);
    await setQuote(app, admin, 'EURUSD', 1.1102, 1.1104); // equity 11000
    await waitFor('the mark at 11000', async () => (await challenge(view.id)).high_water_mark === '11000.00');
    await setQuote(app, admin, 'EURUSD', 1.1062, 1.1064); // equity 10600: above 11000 - 500
    await settled(app, 'EURUSD'); // the rules have run at this quote
    expect(await challenge(view.id)).toMatchObject({ status: 'active', high_water_mark: '11000.00' });
    await setQuote(app, admin, 'EURUSD', 1.1042, 1.1044); // equity 10400 < 10500; a static floor (9500) would hold
    const failed = await waitForStatus(view.id, 'failed');
    expect(failed.failure).toMatchObject({ rule: 'total_loss', threshold: '10500.00', equity: '10400.00' });
    expect(failed.high_water_mark).toBe('11000.00');
    await waitFor('closed out', async () => (await openOrders(login)) === 0);
  });

  test('when the mode is static, then the floor is the initial balance less the loss, whatever the mark', async () => {
    const id = await program([phase({ max_daily_loss_pct: 50, max_total_loss_pct: 3 })]);
    const { customer, challenge: view, login } = await start(id);
    await buy(customer.token, login);
    await setQuote(app, admin, 'EURUSD', 1.1102, 1.1104);
    await waitFor('the mark at 11000', async () => (await challenge(view.id)).high_water_mark === '11000.00');
    await setQuote(app, admin, 'EURUSD', 1.0973, 1.0975); // equity 9710 >= 9700
    await settled(app, 'EURUSD'); // the rules have run at this quote
    expect((await challenge(view.id)).status).toBe('active');
    await setQuote(app, admin, 'EURUSD', 1.0971, 1.0973); // equity 9690 < 9700
    const failed = await waitForStatus(view.id, 'failed');
    expect(failed.failure).toMatchObject({ rule: 'total_loss', threshold: '9700.00', equity: '9690.00' });
  });
});

describe('passing', () => {
  test('when the target is reached with nothing open, then the phase passes, the next phase and then the funded stage start on new accounts', async () => {
    const id = await program([
      phase({ profit_target_pct: 5, min_trading_days: 1, max_daily_loss_pct: 50, max_total_loss_pct: 50 }),
      phase({ name: 'Verification', profit_target_pct: 5, min_trading_days: 1, max_daily_loss_pct: 50, max_total_loss_pct: 50 }),
    ]);
    const { customer, challenge: first, login } = await start(id);
    const earn = async (on: number) => {
      await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
      const ticket = await buy(customer.token, on);
      await setQuote(app, admin, 'EURUSD', 1.1102, 1.1104); // +1000
      expectOk(await app.request('POST', `/orders/${ticket}/close`, { token: customer.token }), 200);
    };
    await earn(login);
    const passed = await waitForStatus(first.id, 'passed');
    expect(passed).toMatchObject({ failure: null, trading_days: 1 });
    const [event] = await eventsOf(app, 'prop.challenge_passed', first.id);
    expect(event!.data).toMatchObject({ id: first.id, status: 'passed', next_status: 'active' });
    const second = await challenge(event!.data.next_challenge_id as string);
    expect(second).toMatchObject({ phase: 2, status: 'active', program_id: id, day_start_equity: '10000.00', trading_days: 0 });
    expect(second.login).not.toBe(login);
    expect((await ledgerOf(app, second.login)).map((r) => r.kind)).toEqual(['challenge_funding']);
    // The passed phase's account stops trading.
    expectError(
      await app.request('POST', '/orders', { token: customer.token, body: { login, symbol: 'EURUSD', cmd: 0, volume: 0.1 } }),
      403,
      'TRADING_DISABLED',
    );

    await earn(second.login);
    await waitForStatus(second.id, 'passed');
    const [event2] = await eventsOf(app, 'prop.challenge_passed', second.id);
    const funded = await challenge(event2!.data.next_challenge_id as string);
    expect(funded).toMatchObject({ phase: 3, status: 'funded' });
    const mine = expectOk(await app.request('GET', '/customers/me/challenges', { token: customer.token }), 200);
    expect(mine.items.map((c: { status: string }) => c.status)).toEqual(['funded', 'passed', 'passed']);

    // The funded account pays out the program's share (80 %) of what it gives up.
    await earn(funded.login);
    expect422(await app.request('POST', '/prop/payouts', { token: customer.token, body: { login, amount: 100 } }), [
      'body',
      'login',
    ]);
    const wallet = await walletOf(app, customer);
    const payout = expectOk(
      await app.request('POST', '/prop/payouts', { token: customer.token, body: { login: funded.login, amount: 500 } }),
      201,
    );
    expectOk(await app.request('POST', `/prop/payouts/${payout.id}/approve`, { token: admin }), 200);
    const walletLedger = await ledgerOf(app, wallet);
    expect(walletLedger.at(-1)).toMatchObject({ kind: 'payout', amount: '400.00' });
    expect((await ledgerOf(app, funded.login)).at(-1)).toMatchObject({ kind: 'payout', amount: '-500.00' });
  });

  test('when the target is reached but too few days had a trade, then the phase stays active', async () => {
    const id = await program([phase({ profit_target_pct: 5, min_trading_days: 2, max_daily_loss_pct: 50 })]);
    const { customer, challenge: view, login } = await start(id);
    const ticket = await buy(customer.token, login);
    await setQuote(app, admin, 'EURUSD', 1.1102, 1.1104);
    expectOk(await app.request('POST', `/orders/${ticket}/close`, { token: customer.token }), 200);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await challenge(view.id)).toMatchObject({ status: 'active', trading_days: 1 });
  });
});

describe('exactly once', () => {
  async function rowOf(accountId: string): Promise<ChallengeRow> {
    const em = app.runtime.services.orm.em.fork() as EntityManager;
    const [row] = await executeNamed<ChallengeRow>(
      em,
      ACTIVE_CHALLENGES_OF_ACCOUNTS.bind({ account_ids: JSON.stringify([accountId]) }),
    );
    return row!;
  }

  test('when a breach and a pass of one stage are decided at the same time, then exactly one of them happens', async () => {
    const id = await program([phase({ profit_target_pct: 1, max_daily_loss_pct: 5 })]);
    for (let round = 0; round < 5; round++) {
      const { challenge: view, login } = await start(id);
      expectOk(
        await app.request('POST', `/api/backoffice/accounts/${login}/deposits`, { token: admin, body: { amount: 200 } }),
        201,
      );
      const [{ account_id: accountId }] = await sql<{ account_id: string }>(
        app,
        'select account_id from prop_challenges where id = ?',
        [view.id],
      );
      const row = await rowOf(accountId!);
      const orm = app.runtime.services.orm;
      const failure = {
        rule: 'daily_loss' as const,
        threshold: '9500.00',
        equity: '9400.00',
        balance: '10200.00',
        at: new Date().toISOString(),
      };
      const [failed, next] = await Promise.all([
        failChallenge(orm.em.fork() as EntityManager, view.id, accountId!, failure),
        passChallengeIfDue(orm.em.fork() as EntityManager, app.runtime.services.quotes, row),
      ]);
      expect(Number(failed) + Number(next !== null)).toBe(1);
      const decided = await challenge(view.id);
      expect(decided.status).toBe(failed ? 'failed' : 'passed');
      expect((await eventsOf(app, 'prop.challenge_failed', view.id)).length).toBe(failed ? 1 : 0);
      expect((await eventsOf(app, 'prop.challenge_passed', view.id)).length).toBe(failed ? 0 : 1);
      const stages = await sql(app, 'select id from prop_challenges where previous_id = ?', [view.id]);
      expect(stages.length).toBe(failed ? 0 : 1);
    }
  });

  test('when one breach is decided twice at once, then it fails once', async () => {
    const id = await program([phase()]);
    const { challenge: view } = await start(id);
    const [{ account_id: accountId }] = await sql<{ account_id: string }>(
      app,
      'select account_id from prop_challenges where id = ?',
      [view.id],
    );
    const orm = app.runtime.services.orm;
    const failure = {
      rule: 'total_loss' as const,
      threshold: '9000.00',
      equity: '8000.00',
      balance: '10000.00',
      at: new Date().toISOString(),
    };
    const moved = await Promise.all(
      [1, 2, 3].map(() => failChallenge(orm.em.fork() as EntityManager, view.id, accountId!, failure)),
    );
    expect(moved.filter(Boolean)).toHaveLength(1);
    expect(await eventsOf(app, 'prop.challenge_failed', view.id)).toHaveLength(1);
  });
});

describe('the schedule', () => {
  test('when a phase outlives max_trading_days, then the sweep fails it with rule time_limit and closes its orders', async () => {
    const id = await program([phase({ max_trading_days: 30, max_daily_loss_pct: 50, max_total_loss_pct: 50 })]);
    const { customer, challenge: view, login } = await start(id);
    await buy(customer.token, login);
    await sql(app, `update prop_challenges set ends_at = now() - interval '1 second' where id = ?`, [view.id]);
    const failed = await waitForStatus(view.id, 'failed', 20_000);
    expect(failed.failure).toMatchObject({ rule: 'time_limit', balance: '10000.00' });
    await waitFor('closed out', async () => (await openOrders(login)) === 0);
  });

  test('when the end of day runs, then the rollover takes the day start: the larger of balance and equity, once a date', async () => {
    const id = await program([phase({ max_daily_loss_pct: 50, max_total_loss_pct: 50 })]);
    const { customer, challenge: view, login } = await start(id);
    await buy(customer.token, login);
    await setQuote(app, admin, 'EURUSD', 1.1052, 1.1054); // equity 10500
    const today = await rolloverPassedToday(app, admin);
    await runEod(app, admin, today);
    expect((await challenge(view.id)).day_start_equity).toBe('10500.00');
    // The date is done: running it again takes nothing, whatever equity is now.
    await setQuote(app, admin, 'EURUSD', 1.0952, 1.0954); // equity 9500, balance 10000
    await runEod(app, admin, today);
    expect((await challenge(view.id)).day_start_equity).toBe('10500.00');
    // The next rollover takes the balance, which is now the larger.
    const em = app.runtime.services.orm.em.fork() as EntityManager;
    const [{ account_id: accountId }] = await sql<{ account_id: string }>(
      app,
      'select account_id from prop_challenges where id = ?',
      [view.id],
    );
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const dayStart = (figures: { balance: string; equity: string }, date: string) =>
      takeDayStartEquities(em, [{ accountId: accountId!, figures }], date);
    expect(await dayStart({ balance: '10000.00', equity: '9500.00' }, tomorrow)).toBe(1);
    expect((await challenge(view.id)).day_start_equity).toBe('10000.00');
    // A back-filled older date never moves it back.
    expect(await dayStart({ balance: '1.00', equity: '1.00' }, today)).toBe(0);
  });
});
