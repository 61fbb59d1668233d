import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { Queue } from 'bullmq';
import { sql, startTestApp, testRedis, waitFor, type TestApp } from '../../helpers/test-app';
import { expect422, expectError, expectOk } from '../trading/trading-kit';
import { allJobs, newGroup, outboxDrained, seedClosedOrders, tableFingerprints, tradingAccount, trades } from './risk-kit';

/**
 * Risk rule preview: the input validated at exact paths,
 * the classification computed by a worker (queue `risk`) with one SQL aggregate, the answer
 * waiting for it with a bound; deterministic, and writing nothing but its run record.
 */
let app: TestApp;
let admin: string;
let analyst: LoggedIn;
let customer: LoggedIn;

const DAY = 86_400_000;

/** A rule narrowed to one group: toxic = quick and nearly always winning, watchlist = winning with a good factor. */
function rule(groupId: string, extra: Record<string, unknown> = {}) {
  return {
    min_trades_to_classify: 5,
    rolling_window_days: 30,
    conditions: { group_ids: [groupId] },
    actions: { toxic: { disable_trading: true, notify: true }, watchlist: { notify: true } },
    toxic: { max_avg_hold_seconds: 60, min_win_rate: 0.9 },
    watchlist: { min_win_rate: 0.6, min_profit_factor: 2 },
    ...extra,
  };
}

function preview(body: unknown, token = analyst.token) {
  return app.request('POST', '/risk/rules/preview', { token, body });
}

beforeAll(async () => {
  app = await startTestApp({ label: 'risk-preview' });
  admin = await adminToken(app);
  analyst = await createStaff(app, ['preview_risk_rules'], admin);
  customer = await createCustomer(app, admin);
});
afterAll(() => app?.stop());

describe('classifying', () => {
  test('when accounts trade differently, then each class is counted, with the accounts evaluated and the window', async () => {
    const group = await newGroup(app, admin);
    const acct = () => tradingAccount(app, admin, customer, group);
    const [scalper, winner, average, few, idle, old] = await Promise.all([acct(), acct(), acct(), acct(), acct(), acct()]);
    await seedClosedOrders(app, scalper, trades(10, 10, 30)); // toxic: 30 s holds, 100 % wins
    await seedClosedOrders(app, winner, trades(10, 7, 600, 30, -10)); // watchlist: 70 %, factor 210/30 = 7
    await seedClosedOrders(app, average, trades(10, 5, 600)); // normal: 50 %
    await seedClosedOrders(app, few, trades(4, 4, 10)); // unclassified: 4 < 5 trades
    await seedClosedOrders(app, old, trades(10, 10, 30, 10, -10, { daysAgo: 31 })); // unclassified: outside the window
    void idle; // unclassified: no orders at all

    const before = Date.now();
    const res = await preview(rule(group));
    const body = expectOk(res, 200);
    expect(body).toMatchObject({
      status: 'completed',
      counts: { toxic: 1, watchlist: 1, normal: 1, unclassified: 3 },
      accounts_evaluated: 6,
      error: null,
    });
    const start = Date.parse(body.window_start);
    const end = Date.parse(body.window_end);
    expect(end - start).toBe(30 * DAY);
    expect(end).toBeGreaterThanOrEqual(before - 1000);
    expect(end).toBeLessThanOrEqual(Date.now());

    // The status URL reads the same run.
    expect(expectOk(await app.request('GET', `/risk/previews/${body.id}`, { token: analyst.token }), 200)).toEqual(body);
    // Deterministic: the same rule over the same orders counts the same.
    const again = expectOk(await preview(rule(group)), 200);
    expect(again.counts).toEqual(body.counts);
    expect(again.id).not.toBe(body.id);
  });

  test('when thresholds sit exactly on the boundaries, then they are met (at most / at least)', async () => {
    const group = await newGroup(app, admin);
    const edge = await tradingAccount(app, admin, customer, group);
    // 10 trades in 10 days is 1 a day; 9 of 10 won (0.9); holds average 60 s; factor 90/10 = 9.
    await seedClosedOrders(app, edge, trades(10, 9, 60));
    const body = expectOk(
      await preview(
        rule(group, {
          rolling_window_days: 10,
          toxic: { max_avg_hold_seconds: 60, min_win_rate: 0.9, min_profit_factor: 9, min_trades_per_day: 1 },
        }),
      ),
      200,
    );
    expect(body.counts).toEqual({ toxic: 1, watchlist: 0, normal: 0, unclassified: 0 });
    const stricter = expectOk(await preview(rule(group, { rolling_window_days: 10, toxic: { min_trades_per_day: 1.01 } })), 200);
    expect(stricter.counts).toEqual({ toxic: 0, watchlist: 1, normal: 0, unclassified: 0 });
  });

  test('when an account never lost, then its profit factor is unbounded and meets any minimum', async () => {
    const group = await newGroup(app, admin);
    const account = await tradingAccount(app, admin, customer, group);
    await seedClosedOrders(app, account, trades(6, 6, 3600));
    const body = expectOk(await preview(rule(group, { toxic: { min_profit_factor: 1_000_000 } })), 200);
    expect(body.counts.toxic).toBe(1);
  });

  test('when conditions name symbols and kinds, then only those orders and accounts count', async () => {
    const group = await newGroup(app, admin);
    const live = await tradingAccount(app, admin, customer, group, 'live');
    const prop = await tradingAccount(app, admin, customer, group, 'prop');
    await seedClosedOrders(app, live, trades(10, 10, 30, 10, -10, { symbol: 'XAUUSD' }));
    await seedClosedOrders(app, prop, trades(10, 10, 30));

    const all = expectOk(await preview(rule(group)), 200);
    expect(all.counts).toEqual({ toxic: 2, watchlist: 0, normal: 0, unclassified: 0 });
    const eurusd = expectOk(await preview(rule(group, { conditions: { group_ids: [group], symbols: ['EURUSD'] } })), 200);
    expect(eurusd.counts).toEqual({ toxic: 1, watchlist: 0, normal: 0, unclassified: 1 });
    const props = expectOk(await preview(rule(group, { conditions: { group_ids: [group], kinds: ['prop'] } })), 200);
    expect(props).toMatchObject({ accounts_evaluated: 1, counts: { toxic: 1, watchlist: 0, normal: 0, unclassified: 0 } });
  });

  test('when no condition narrows, then every trading account is evaluated and no wallet', async () => {
    const body = expectOk(await preview({ ...rule('x'), conditions: {} }), 200);
    const [row] = await sql<{ n: number }>(app, `select count(*)::int as n from accounts where kind <> 'wallet'`);
    expect(body.accounts_evaluated).toBe(row!.n);
  });
});

describe('validating', () => {
  const group = '00000000-0000-4000-8000-000000000001';
  test.each([
    ['a win rate above 1', { toxic: { min_win_rate: 1.5 } }, ['body', 'toxic', 'min_win_rate']],
    ['a negative hold time', { watchlist: { max_avg_hold_seconds: -1 } }, ['body', 'watchlist', 'max_avg_hold_seconds']],
    ['a profit factor as text', { toxic: { min_profit_factor: 'high' } }, ['body', 'toxic', 'min_profit_factor']],
    ['a class without thresholds', { watchlist: {} }, ['body', 'watchlist']],
    ['no toxic class', { toxic: undefined }, ['body', 'toxic']],
    ['a window of 0 days', { rolling_window_days: 0 }, ['body', 'rolling_window_days']],
    ['a fractional trade minimum', { min_trades_to_classify: 2.5 }, ['body', 'min_trades_to_classify']],
    ['a wallet kind', { conditions: { kinds: ['live', 'wallet'] } }, ['body', 'conditions', 'kinds', 1]],
    ['a group id that is no uuid', { conditions: { group_ids: ['x'] } }, ['body', 'conditions', 'group_ids', 0]],
    ['notify as text', { actions: { toxic: { notify: 'yes' } } }, ['body', 'actions', 'toxic', 'notify']],
    [
      'a move to a group that does not exist',
      { actions: { watchlist: { move_to_group_id: group } } },
      ['body', 'actions', 'watchlist', 'move_to_group_id'],
    ],
  ])('when the input has %s, then 422 at exactly that path and no run is recorded', async (_what, change, loc) => {
    const [before] = await sql<{ n: number }>(app, 'select count(*)::int as n from risk_runs');
    expect422(await preview({ ...rule(group), ...change }), loc);
    const [after] = await sql<{ n: number }>(app, 'select count(*)::int as n from risk_runs');
    expect(after!.n).toBe(before!.n);
  });

  test('when staff lack preview_risk_rules, or a customer asks, then 403', async () => {
    const other = await createStaff(app, ['manage_payouts'], admin);
    expectError(await preview(rule(await newGroup(app, admin)), other.token), 403, 'FORBIDDEN');
    expectError(await preview(rule(await newGroup(app, admin)), customer.token), 403, 'FORBIDDEN');
  });
});

describe('writing nothing', () => {
  test('when a preview runs, then every business table keeps its rows and checksum, and only the preview job was queued', async () => {
    const group = await newGroup(app, admin);
    const target = await newGroup(app, admin);
    const account = await tradingAccount(app, admin, customer, group);
    await seedClosedOrders(app, account, trades(10, 10, 30));
    await outboxDrained(app);

    const tablesBefore = await tableFingerprints(app, ['risk_runs']);
    const jobsBefore = new Set((await allJobs(app)).map((j) => `${j.queue}/${j.id}`));
    const [runsBefore] = await sql<{ n: number }>(app, 'select count(*)::int as n from risk_runs');

    const body = expectOk(
      await preview(
        rule(group, {
          actions: {
            toxic: { move_to_group_id: target, notify: true, disable_trading: true },
            watchlist: { notify: true },
            normal: { move_to_group_id: target },
          },
        }),
      ),
      200,
    );
    expect(body.counts.toxic).toBe(1);

    expect(await tableFingerprints(app, ['risk_runs'])).toEqual(tablesBefore);
    const [runsAfter] = await sql<{ n: number }>(app, 'select count(*)::int as n from risk_runs');
    expect(runsAfter!.n).toBe(runsBefore!.n + 1);
    // Housekeeping schedules (the outbox relay, expiry) keep ticking; they are not the request's doing.
    const added = (await allJobs(app)).filter((j) => !jobsBefore.has(`${j.queue}/${j.id}`) && !j.scheduled);
    expect(added.map((j) => [j.queue, j.name, j.id])).toEqual([['risk', 'risk-preview', `rp-${body.id}`]]);
  });
});

describe('waiting with a bound', () => {
  test('when the result takes longer than RISK_PREVIEW_WAIT_MS (1 ms), then 202 with a status URL that shows it when done', async () => {
    // An API-only instance of the same deployment that waits 1 ms, with the risk queue paused
    // until it has answered; then the first app's workers classify.
    const impatient = await startTestApp({ shareWith: app, env: { ROLE: 'api', RISK_PREVIEW_WAIT_MS: '1' } });
    const connection = testRedis();
    const queue = new Queue('risk', { connection, prefix: app.config.queuePrefix });
    try {
      const group = await newGroup(app, admin);
      await queue.pause();
      const res = await impatient.request('POST', '/risk/rules/preview', { token: analyst.token, body: rule(group) });
      const accepted = expectOk(res, 202);
      expect(accepted).toEqual({ id: expect.any(String), status_url: `/risk/previews/${accepted.id}` });
      const running = expectOk(await app.request('GET', accepted.status_url, { token: analyst.token }), 200);
      expect(running).toMatchObject({ status: 'running', counts: null, accounts_evaluated: null, completed_at: null });
      await queue.resume();
      const done = await waitFor('the preview to complete', async () => {
        const run = await app.request('GET', accepted.status_url, { token: analyst.token });
        return run.body.status === 'completed' ? run.body : undefined;
      });
      expect(done).toMatchObject({ id: accepted.id, accounts_evaluated: 0 });
    } finally {
      await queue.resume();
      await queue.close();
      await connection.quit();
      await impatient.stop();
    }
  });
});
