import { adminToken, createCustomer, type LoggedIn } from '../../helpers/identity';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, openOrder, setUpMarket } from '../../helpers/trading';
import { eodQueue, openedAt, runEod, swapRows } from './eod-kit';

jest.setTimeout(180_000);

let app: TestApp;
let smtp: SmtpSink;
let token: string;
let customer: LoggedIn;
let other: LoggedIn;

/** A group whose EURUSD rows charge 2.5 a lot a night on buys and credit 1.2 on sells. */
async function swapGroup(terms: Record<string, unknown>): Promise<string> {
  const { groupId } = await setUpMarket(app, token);
  const patched = await app.request('PATCH', `/groups/${groupId}`, { token, body: terms });
  expect(patched.status).toBe(200);
  const row = await app.request('PUT', `/groups/${groupId}/instruments/EURUSD`, {
    token,
    body: { enabled: true, spread: 0, swap_long: -2.5, swap_short: 1.2 },
  });
  expect([200, 201]).toContain(row.status);
  return groupId;
}

const accounts: Record<string, { login: number; buy: number; sell: number }> = {};

beforeAll(async () => {
  smtp = await startSmtpSink();
  app = await startTestApp({ label: 'eod', env: { SMTP_URL: smtp.url } });
  token = await adminToken(app);
  customer = await createCustomer(app, token);
  other = await createCustomer(app, token);
  const groups = {
    plain: await swapGroup({ swap_multiplier: 2 }),
    disabled: await swapGroup({ swap_enabled: false }),
    free: await swapGroup({ swap_free: true, swap_free_days: 1 }),
    islamic: await swapGroup({ is_islamic: true, swap_free_days: 0 }),
  };
  for (const [name, groupId] of Object.entries(groups)) {
    const login = await fundedAccount(app, token, customer.id, groupId, 10_000);
    const buy = await openOrder(app, token, login, 0, 0.1);
    const sell = await openOrder(app, token, login, 1, 0.2);
    accounts[name] = { login, buy, sell };
  }
  // Held since the Friday before: every night of the week of 2026-11-23 is due.
  for (const a of Object.values(accounts)) {
    await sql(app, 'update accounts set created_at = ? where login = ?', ['2026-11-19T10:00:00Z', a.login]);
    await openedAt(app, a.buy, '2026-11-20T10:00:00Z');
    await openedAt(app, a.sell, '2026-11-20T10:00:00Z');
  }
  // Swap-free for one night: the sell opened on the 24th is in its free night that date.
  await openedAt(app, accounts.free!.sell, '2026-11-24T10:00:00Z');
  // The other customer's account, with nothing open and nothing moving after its deposit.
  const { groupId } = await setUpMarket(app, token);
  accounts.other = { login: await fundedAccount(app, token, other.id, groupId, 500), buy: 0, sell: 0 };
  await sql(app, 'update accounts set created_at = ? where login = ?', ['2026-11-19T10:00:00Z', accounts.other.login]);
});
afterAll(async () => {
  await app?.stop();
  await smtp?.close();
});

describe('broker settings', () => {
  test('when rollover_time or triple_swap_day is out of range, then 422 at the field and nothing changes', async () => {
    for (const [field, value, type] of [
      ['rollover_time', '25:00', 'string_pattern_mismatch'],
      ['rollover_time', '9:00', 'string_pattern_mismatch'],
      ['triple_swap_day', 'saturday', 'literal_error'],
    ] as const) {
      const res = await app.request('PATCH', '/api/admin/settings', { token, body: { [field]: value } });
      expect(res.status).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ loc: ['body', field], type });
    }
    const settings = await app.request('GET', '/api/admin/settings', { token });
    expect(settings.body).toMatchObject({ rollover_time: '21:00', triple_swap_day: 'wednesday' });
  });

  test('when rollover_time changes, then the rollover is rescheduled at it (one scheduler)', async () => {
    const res = await app.request('PATCH', '/api/admin/settings', { token, body: { rollover_time: '22:30' } });
    expect(res.status).toBe(200);
    expect(res.body.rollover_time).toBe('22:30');
    const { queue, close } = eodQueue(app);
    try {
      const schedulers = await queue.getJobSchedulers();
      expect(schedulers.map((s) => [s.key, s.pattern])).toEqual([['eod-rollover', '0 30 22 * * *']]);
    } finally {
      await close();
    }
    await app.request('PATCH', '/api/admin/settings', { token, body: { rollover_time: '21:00' } });
  });
});

describe('requesting a run', () => {
  test('when the trading date is malformed, missing or in the future, then 422 at trading_date', async () => {
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    for (const body of [{ trading_date: '2026-13-01' }, { trading_date: '26-11-2026' }, {}, { trading_date: tomorrow }]) {
      const res = await app.request('POST', '/api/backoffice/eod/runs', { token, body });
      expect(res.status).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'trading_date']);
    }
    expect(await sql(app, 'select 1 from eod_runs')).toHaveLength(0);
  });

  test("when today's rollover has not passed yet, then 422 at trading_date and no run is recorded", async () => {
    // At 23:59 UTC today's rollover is still ahead at any moment of the day but its last minute.
    expect((await app.request('PATCH', '/api/admin/settings', { token, body: { rollover_time: '23:59' } })).status).toBe(200);
    try {
      const today = new Date().toISOString().slice(0, 10);
      const res = await app.request('POST', '/api/backoffice/eod/runs', { token, body: { trading_date: today } });
      expect(res.status).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'trading_date']);
      expect(res.body.detail[0].msg).toContain('23:59');
      expect(await sql(app, 'select 1 from eod_runs')).toHaveLength(0);
    } finally {
      await app.request('PATCH', '/api/admin/settings', { token, body: { rollover_time: '21:00' } });
    }
  });

  test('when a staff user without run_end_of_day asks, then 403', async () => {
    const res = await app.request('POST', '/api/backoffice/eod/runs', {
      token: customer.token,
      body: { trading_date: '2026-11-01' },
    });
    expect(res.status).toBe(403);
  });

  test('when a run of the date is queued or running, then asking again answers that run', async () => {
    const { queue, close } = eodQueue(app);
    try {
      await queue.pause();
      const [a, b] = await Promise.all(
        [0, 1].map(() => app.request('POST', '/api/backoffice/eod/runs', { token, body: { trading_date: '2026-11-01' } })),
      );
      expect([a!.status, b!.status]).toEqual([202, 202]);
      expect(b!.body.id).toBe(a!.body.id);
      expect(a!.body.status_url).toBe(`/api/backoffice/eod/runs/${a!.body.id}`);
      const list = await app.request('GET', '/api/backoffice/eod/runs?trading_date=2026-11-01', { token });
      expect(list.body.items.map((r: { id: string; status: string }) => [r.id, r.status])).toEqual([[a!.body.id, 'queued']]);
    } finally {
      await queue.resume();
      await close();
    }
  });
});

describe('swaps', () => {
  test('when the rollover of a Tuesday runs, then buys pay swap_long and sells get swap_short, x volume x multiplier', async () => {
    const run = await runEod(app, token, '2026-11-24');
    expect(run).toMatchObject({ status: 'completed', accounts_failed: 0 });
    expect(run.accounts_done).toBe(run.accounts_total);
    // -2.5 x 0.1 x 2 and 1.2 x 0.2 x 2.
    expect(await swapRows(app, accounts.plain!.login)).toEqual([
      { reference_id: String(accounts.plain!.buy), amount: '-0.50' },
      { reference_id: String(accounts.plain!.sell), amount: '0.48' },
    ]);
    expect(await swapRows(app, accounts.disabled!.login)).toEqual([]);
    // swap_free_days 1: the buy held since the 20th pays, the sell opened that day is free.
    expect(await swapRows(app, accounts.free!.login)).toEqual([{ reference_id: String(accounts.free!.buy), amount: '-0.25' }]);
    // Islamic with swap_free_days 0: never.
    expect(await swapRows(app, accounts.islamic!.login)).toEqual([]);
    expect(run.swaps_booked).toBe(3);
    await expectLedgerBalanced(app);
  });

  test('when the rollover of the triple day runs, then three nights are booked; on a Sunday none', async () => {
    await runEod(app, token, '2026-11-25');
    expect((await swapRows(app, accounts.plain!.login)).slice(2)).toEqual([
      { reference_id: String(accounts.plain!.buy), amount: '-1.50' },
      { reference_id: String(accounts.plain!.sell), amount: '1.44' },
    ]);
    // The order view sums the swaps booked for each order so far.
    const orders = await app.request('GET', `/orders?login=${accounts.plain!.login}`, { token });
    const swapOfOrder = (ticket: number) => orders.body.items.find((o: { order: number }) => o.order === ticket)?.swap;
    expect([swapOfOrder(accounts.plain!.buy), swapOfOrder(accounts.plain!.sell)]).toEqual(['-2.00', '1.92']);
    // balance_after chains from row to row in booking (seq) order, swap rows included.
    const chain = await sql<{ amount: string; balance_after: string }>(
      app,
      `select l.amount::text as amount, l.balance_after::text as balance_after from ledger_entries l
         join accounts a on a.id = l.account_id where a.login = ? order by l.seq`,
      [accounts.plain!.login],
    );
    chain.reduce((before, row) => {
      expect(Number(row.balance_after)).toBeCloseTo(before + Number(row.amount), 2);
      return Number(row.balance_after);
    }, 0);
    const sunday = await runEod(app, token, '2026-11-22');
    expect(sunday.swaps_booked).toBe(0);
    expect(await swapRows(app, accounts.plain!.login)).toHaveLength(4);
  });

  test('when a date runs a second time, then it books nothing twice and writes no second snapshot', async () => {
    const before = await sql(app, "select count(*)::int as n from ledger_entries where kind = 'swap'");
    const again = await runEod(app, token, '2026-11-24');
    expect(again).toMatchObject({ status: 'completed', swaps_booked: 0, snapshots_written: 0, accounts_failed: 0 });
    expect(await sql(app, "select count(*)::int as n from ledger_entries where kind = 'swap'")).toEqual(before);
    expect(
      await sql(
        app,
        'select count(*)::int as n from account_daily_snapshots group by account_id, trading_date having count(*) > 1',
      ),
    ).toEqual([]);
    await expectLedgerBalanced(app);
  });

  test('when one account fails every attempt, then it is counted failed and every other account is done', async () => {
    const bad = accounts.disabled!.login;
    await sql(
      app,
      `create function eod_test_fail() returns trigger language plpgsql as $$
       begin if new.login = ${bad} then raise exception 'planted failure'; end if; return new; end $$`,
    );
    await sql(
      app,
      'create trigger eod_test_fail before insert on account_daily_snapshots for each row execute function eod_test_fail()',
    );
    try {
      const run = await runEod(app, token, '2026-11-23');
      expect(run.status).toBe('completed');
      expect(run.accounts_failed).toBe(1);
      expect(run.accounts_done).toBe(run.accounts_total - 1);
      expect(await sql(app, "select count(*)::int as n from account_daily_snapshots where trading_date = '2026-11-23'")).toEqual([
        { n: run.accounts_total - 1 },
      ]);
      // The failed account's transaction rolled back whole: no swap of its own either.
      expect(
        await sql(
          app,
          "select count(*)::int as n from swap_bookings s join accounts a on a.id = s.account_id where a.login = ? and trading_date = '2026-11-23'",
          [bad],
        ),
      ).toEqual([{ n: 0 }]);
    } finally {
      await sql(app, 'drop trigger eod_test_fail on account_daily_snapshots');
      await sql(app, 'drop function eod_test_fail()');
    }
    await expectLedgerBalanced(app);
  });
});

describe('daily snapshots', () => {
  test('when staff read an account, then each date shows balance, equity, margin and the movements since the snapshot before', async () => {
    const res = await app.request(
      'GET',
      `/api/backoffice/accounts/${accounts.plain!.login}/daily?from=2026-11-22&to=2026-11-25`,
      { token },
    );
    expect(res.status).toBe(200);
    expect(res.body.items.map((s: { trading_date: string }) => s.trading_date)).toEqual([
      '2026-11-22',
      '2026-11-23',
      '2026-11-24',
      '2026-11-25',
    ]);
    const [sunday, , tuesday, wednesday] = res.body.items;
    // The first snapshot written (the 24th) counts everything since the account opened.
    expect(tuesday.movements).toEqual({ deposit: '10000.00', swap: '-0.02' });
    // Dates run after it (a back-fill) count nothing again.
    expect(sunday.movements).toEqual({});
    expect(wednesday.movements).toEqual({ swap: '-0.06' });
    expect(Number(wednesday.equity)).toBeCloseTo(Number(wednesday.balance) + Number(wednesday.floating_profit), 2);
    expect(Number(wednesday.margin)).toBeGreaterThan(0);
    expect(Number(wednesday.free_margin)).toBeCloseTo(Number(wednesday.equity) - Number(wednesday.margin), 2);
  });

  test("when a customer reads their own account's snapshots, then 200; another customer's account is 404", async () => {
    const own = await app.request('GET', `/customers/me/accounts/${accounts.plain!.login}/daily`, { token: customer.token });
    expect(own.status).toBe(200);
    expect(own.body.total).toBe(4);
    const theirs = await app.request('GET', `/customers/me/accounts/${accounts.other!.login}/daily`, { token: customer.token });
    expect(theirs.status).toBe(404);
    const bad = await app.request('GET', `/customers/me/accounts/${accounts.plain!.login}/daily?from=yesterday`, {
      token: customer.token,
    });
    expect(bad.status).toBe(422);
  });
});

describe('daily statements', () => {
  test('when runs finish, then each customer with activity gets one statement mail per date', async () => {
    const dates = ['2026-11-22', '2026-11-23', '2026-11-24', '2026-11-25'];
    // The customer every date (open orders); the other customer once, for the deposit its first snapshot counted.
    const expected = dates.length + 1;
    await waitFor(
      'the statement mails',
      async () => smtp.received.filter((m) => /daily statement/i.test(m.raw)).length >= expected,
      30_000,
    );
    const rows = await sql<{ customer_id: string; n: number }>(
      app,
      'select customer_id, count(*)::int as n from daily_statements group by customer_id order by n desc',
    );
    expect(rows).toEqual([
      { customer_id: customer.id, n: dates.length },
      { customer_id: other.id, n: 1 },
    ]);
    // A second run of a date sent no second mail: once no mail waits to be sent and the sink has
    // every one sent, a second statement would be among them.
    await waitFor(
      'every mail sent and received',
      async () => {
        const [m] = await sql<{ waiting: number; sent: number }>(
          app,
          `select count(*) filter (where status in ('queued', 'sending'))::int as waiting,
                  count(*) filter (where status = 'sent')::int as sent
             from mail_messages`,
        );
        return m!.waiting === 0 && smtp.received.length >= m!.sent;
      },
      30_000,
    );
    const statements = smtp.received.filter((m) => /daily statement/i.test(m.raw));
    expect(statements).toHaveLength(expected);
    expect(statements.filter((m) => m.to.includes(other.email))).toHaveLength(1);
  });
});
