import { randomUUID } from 'node:crypto';
import { Migration20261124090000_NotificationRiskData } from '../../../src/db/migrations/Migration20261124090000_NotificationRiskData';
import { runRiskApply } from '../../../src/domain/risk/rules';
import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { setUpMarket } from '../../helpers/trading';
import { eventsOf, expect422, expectError, expectOk } from '../trading/trading-kit';
import { newGroup, seedClosedOrders, tradingAccount, trades } from './risk-kit';

/**
 * Saved risk rules: CRUD with manage_risk_rules, audited; applying one
 * queues a job that classifies like the preview and executes the actions per class, each
 * once per account, recorded in the apply run; a disabled account's new orders are 403.
 */
let app: TestApp;
let admin: string;
let riskDesk: LoggedIn;
let customer: LoggedIn;

function ruleBody(groupId: string, extra: Record<string, unknown> = {}) {
  return {
    name: `rule-${Math.random().toString(36).slice(2, 10)}`,
    min_trades_to_classify: 5,
    rolling_window_days: 30,
    conditions: { group_ids: [groupId] },
    actions: {},
    toxic: { max_avg_hold_seconds: 60, min_win_rate: 0.9 },
    watchlist: { min_win_rate: 0.6 },
    ...extra,
  };
}

async function createRule(body: Record<string, unknown>) {
  return expectOk(await app.request('POST', '/risk/rules', { token: riskDesk.token, body }), 201);
}

async function applyAndWait(ruleId: string, page = '') {
  const accepted = expectOk(await app.request('POST', `/risk/rules/${ruleId}/apply`, { token: riskDesk.token }), 202);
  expect(accepted.status_url).toBe(`/risk/rules/${ruleId}/runs/${accepted.id}`);
  return waitFor(
    'the apply run',
    async () => {
      const run = expectOk(await app.request('GET', `${accepted.status_url}${page}`, { token: riskDesk.token }), 200);
      return run.status !== 'running' ? run : undefined;
    },
    20_000,
  );
}

beforeAll(async () => {
  app = await startTestApp({ label: 'risk-rules' });
  admin = await adminToken(app);
  await setUpMarket(app, admin);
  riskDesk = await createStaff(app, ['manage_risk_rules'], admin);
  customer = await createCustomer(app, admin);
});
afterAll(() => app?.stop());

describe('saved rules', () => {
  test('when a rule is created, read, listed, changed and deleted, then each answers the rule and is audited', async () => {
    const group = await newGroup(app, admin);
    const body = ruleBody(group);
    const rule = await createRule(body);
    expect(rule).toMatchObject({ ...body, is_active: true, id: expect.any(String) });
    expect(expectOk(await app.request('GET', `/risk/rules/${rule.id}`, { token: riskDesk.token }), 200)).toEqual(rule);
    const list = expectOk(await app.request('GET', '/risk/rules?is_active=true&page_size=100', { token: riskDesk.token }), 200);
    expect(list.items.map((r: { id: string }) => r.id)).toContain(rule.id);

    expectError(
      await app.request('POST', '/risk/rules', { token: riskDesk.token, body: { ...body, name: body.name.toUpperCase() } }),
      409,
      'NAME_TAKEN',
    );
    const patched = expectOk(
      await app.request('PATCH', `/risk/rules/${rule.id}`, {
        token: riskDesk.token,
        body: { toxic: { min_trades_per_day: 3 }, is_active: false },
      }),
      200,
    );
    expect(patched).toMatchObject({
      toxic: { min_trades_per_day: 3 },
      watchlist: body.watchlist,
      is_active: false,
      name: body.name,
    });
    expect422(
      await app.request('PATCH', `/risk/rules/${rule.id}`, { token: riskDesk.token, body: { toxic: { min_win_rate: 2 } } }),
      ['body', 'toxic', 'min_win_rate'],
    );
    expect422(await app.request('POST', '/risk/rules', { token: riskDesk.token, body: { ...ruleBody(group), name: '' } }), [
      'body',
      'name',
    ]);
    expectError(await app.request('POST', `/risk/rules/${rule.id}/apply`, { token: riskDesk.token }), 409, 'RULE_INACTIVE');

    expectOk(await app.request('DELETE', `/risk/rules/${rule.id}`, { token: riskDesk.token }), 204);
    expectError(await app.request('GET', `/risk/rules/${rule.id}`, { token: riskDesk.token }), 404, 'NOT_FOUND');
    const audit = expectOk(
      await app.request('GET', `/api/admin/audit?entity_type=risk_rule&entity_id=${rule.id}`, { token: admin }),
      200,
    );
    expect(audit.items.map((a: { action: string }) => a.action).sort()).toEqual([
      'risk_rule.created',
      'risk_rule.deleted',
      'risk_rule.updated',
    ]);
  });

  test('when staff lack manage_risk_rules, then every rule route is 403', async () => {
    const previewer = await createStaff(app, ['preview_risk_rules'], admin);
    expectError(await app.request('GET', '/risk/rules', { token: previewer.token }), 403, 'FORBIDDEN');
    expectError(
      await app.request('POST', '/risk/rules', { token: previewer.token, body: ruleBody(await newGroup(app, admin)) }),
      403,
      'FORBIDDEN',
    );
    expectError(await app.request('GET', '/risk/rules', { token: customer.token }), 403, 'FORBIDDEN');
  });
});

describe('applying a rule', () => {
  test('when applied, then each class gets its actions, recorded per account, and a disabled account cannot open orders', async () => {
    const group = await newGroup(app, admin);
    const target = await newGroup(app, admin);
    const scalper = await tradingAccount(app, admin, customer, group);
    const winner = await tradingAccount(app, admin, customer, group);
    const average = await tradingAccount(app, admin, customer, group);
    await seedClosedOrders(app, scalper, trades(10, 10, 30));
    await seedClosedOrders(app, winner, trades(10, 7, 600));
    await seedClosedOrders(app, average, trades(10, 5, 600));
    for (const a of [scalper, average])
      expectOk(
        await app.request('POST', `/api/backoffice/accounts/${a.login}/deposits`, { token: admin, body: { amount: 1000 } }),
        201,
      );
    // A waiting order of the account about to be disabled: the run cancels it as trading_disabled.
    const waiting = expectOk(
      await app.request('POST', '/orders/pending', {
        token: customer.token,
        body: { login: scalper.login, symbol: 'EURUSD', cmd: 2, volume: 0.01, trigger_price: 0.5 },
      }),
      201,
    );

    const rule = await createRule(
      ruleBody(group, {
        actions: {
          toxic: { move_to_group_id: target, disable_trading: true, notify: true },
          watchlist: { notify: true },
        },
      }),
    );
    const run = await applyAndWait(rule.id);
    expect(run).toMatchObject({
      status: 'completed',
      rule_id: rule.id,
      counts: { toxic: 1, watchlist: 1, normal: 1, unclassified: 0 },
      accounts_evaluated: 3,
      items_total: 3,
    });
    const byLogin = Object.fromEntries(run.items.map((i: { login: number }) => [i.login, i]));
    expect(byLogin[scalper.login]).toEqual({
      login: scalper.login,
      risk_class: 'toxic',
      trades: 10,
      moved_to_group_id: target,
      notified: true,
      trading_disabled: true,
      // What the run changed, and what undoing it restores.
      before: { group_id: group, trading_disabled: false },
      after: { group_id: target, trading_disabled: true },
    });
    expect(byLogin[winner.login]).toMatchObject({
      risk_class: 'watchlist',
      notified: true,
      trading_disabled: false,
      moved_to_group_id: null,
      before: { group_id: group, trading_disabled: false },
      after: { group_id: group, trading_disabled: false },
    });
    const [cancelled] = await sql<{ status: string; cancel_reason: string }>(
      app,
      'select status, cancel_reason from pending_orders where ticket = ?',
      [waiting.order],
    );
    expect(cancelled).toEqual({ status: 'cancelled', cancel_reason: 'trading_disabled' });
    expect(byLogin[average.login]).toMatchObject({
      risk_class: 'normal',
      notified: false,
      trading_disabled: false,
      moved_to_group_id: null,
    });

    const [row] = await sql<{ group_id: string; trading_disabled: boolean }>(
      app,
      'select group_id, trading_disabled from accounts where id = ?',
      [scalper.id],
    );
    expect(row).toEqual({ group_id: target, trading_disabled: true });
    const notified = await eventsOf(app, 'account.risk_classified');
    expect(notified.map((e) => [e.aggregate_id, e.data.risk_class]).sort()).toEqual(
      [
        [String(scalper.login), 'toxic'],
        [String(winner.login), 'watchlist'],
      ].sort(),
    );
    expect(notified[0]).toMatchObject({ customer_id: customer.id, data: { rule_id: rule.id, run_id: run.id } });

    // The notify action reaches the customer through the notifications consumer, never naming
    // the class, the rule or the run: not in the body, the data, or a mail.
    const told = await waitFor('the risk notifications', async () => {
      const res = expectOk(await app.request('GET', '/customers/me/notifications?page_size=50', { token: customer.token }), 200);
      const mine = res.items.filter((n: { type: string }) => n.type === 'account.risk_classified');
      return mine.length >= 2 ? mine : undefined;
    });
    expect(told.map((n: { data: unknown }) => n.data)).toEqual(
      expect.arrayContaining([{ login: scalper.login }, { login: winner.login }]),
    );
    const unsaid = (text: string) => {
      expect(text).not.toMatch(/toxic|watchlist|"risk_class"|"rule_(id|name)"|"run_id"/i);
      for (const secret of [rule.id, rule.name, run.id]) expect(text).not.toContain(secret);
    };
    unsaid(JSON.stringify(told));
    const mails = await sql<{ row: string }>(
      app,
      'select row_to_json(m)::text as row from mail_messages m where to_address = ?',
      [customer.email],
    );
    for (const m of mails) unsaid(m.row);

    // TRADING_DISABLED on new orders, market and pending; the normal account still trades.
    const order = { symbol: 'EURUSD', cmd: 0, volume: 0.01 };
    expectError(
      await app.request('POST', '/orders', { token: customer.token, body: { login: scalper.login, ...order } }),
      403,
      'TRADING_DISABLED',
    );
    expectError(
      await app.request('POST', '/orders/pending', {
        token: customer.token,
        body: { login: scalper.login, ...order, cmd: 2, trigger_price: 1.05 },
      }),
      403,
      'TRADING_DISABLED',
    );
    expectOk(await app.request('POST', '/orders', { token: customer.token, body: { login: average.login, ...order } }), 201);

    // A page of one class.
    const toxicOnly = expectOk(
      await app.request('GET', `/risk/rules/${rule.id}/runs/${run.id}?risk_class=toxic`, { token: riskDesk.token }),
      200,
    );
    expect(toxicOnly.items.map((i: { login: number }) => i.login)).toEqual([scalper.login]);
    expect(toxicOnly.items_total).toBe(1);
  });

  test('when an apply job runs again (a retry after a crash), then no action runs twice', async () => {
    const group = await newGroup(app, admin);
    const target = await newGroup(app, admin);
    const scalper = await tradingAccount(app, admin, customer, group);
    await seedClosedOrders(app, scalper, trades(10, 10, 30));
    const rule = await createRule(
      ruleBody(group, { actions: { toxic: { move_to_group_id: target, disable_trading: true, notify: true } } }),
    );
    const run = await applyAndWait(rule.id);
    expect(run.counts.toxic).toBe(1);
    const eventsBefore = (await eventsOf(app, 'account.risk_classified', scalper.login)).length;

    // As if the worker died after acting but before completing the run: the job runs again.
    await sql(app, `update risk_runs set status = 'running', completed_at = null, counts = null where id = ?`, [run.id]);
    await runRiskApply(app.runtime.services.orm.em.fork(), run.id);
    expect((await eventsOf(app, 'account.risk_classified', scalper.login)).length).toBe(eventsBefore);
    const [items] = await sql<{ n: number }>(app, 'select count(*)::int as n from risk_run_items where run_id = ?', [run.id]);
    expect(items!.n).toBe(1);
    const again = expectOk(await app.request('GET', `/risk/rules/${rule.id}/runs/${run.id}`, { token: riskDesk.token }), 200);
    expect(again).toMatchObject({ status: 'completed', counts: run.counts });
  });

  test('when the group to move into was deactivated since the rule was saved, then the run fails saying why', async () => {
    const group = await newGroup(app, admin);
    const target = await newGroup(app, admin);
    const account = await tradingAccount(app, admin, customer, group);
    await seedClosedOrders(app, account, trades(10, 10, 30));
    const rule = await createRule(ruleBody(group, { actions: { toxic: { move_to_group_id: target } } }));
    expectOk(await app.request('PATCH', `/groups/${target}`, { token: admin, body: { is_active: false } }), 200);
    const run = await applyAndWait(rule.id);
    expect(run).toMatchObject({ status: 'failed', error: expect.stringContaining(target) });
    const [row] = await sql<{ group_id: string }>(app, 'select group_id from accounts where id = ?', [account.id]);
    expect(row!.group_id).toBe(group);
  });

  test('when risk notifications were stored with the whole event before the fix, then the migration leaves only the login', async () => {
    const legacy = await createCustomer(app, admin);
    const leaked = { login: 123456, risk_class: 'toxic', rule_id: randomUUID(), rule_name: 'scalpers', run_id: randomUUID() };
    await sql(
      app,
      `insert into notifications (id, created_at, updated_at, customer_id, event_id, type, title, body, data)
       values (gen_random_uuid(), now(), now(), ?, ?, 'account.risk_classified', 'Account review', 'Reviewed', ?::jsonb)`,
      [legacy.id, randomUUID(), JSON.stringify(leaked)],
    );
    const orm = app.runtime.services.orm;
    const migration = new Migration20261124090000_NotificationRiskData(orm.em.getDriver(), orm.config);
    await migration.up();
    for (const query of migration.getQueries()) await sql(app, String(query));

    const res = expectOk(await app.request('GET', '/customers/me/notifications', { token: legacy.token }), 200);
    expect(res.items.map((n: { data: unknown }) => n.data)).toEqual([{ login: 123456 }]);
  });

  test('when the run or rule is unknown, then 404', async () => {
    const rule = await createRule(ruleBody(await newGroup(app, admin)));
    const none = '00000000-0000-4000-8000-000000000000';
    expectError(await app.request('GET', `/risk/rules/${rule.id}/runs/${none}`, { token: riskDesk.token }), 404, 'NOT_FOUND');
    expectError(await app.request('POST', `/risk/rules/${none}/apply`, { token: riskDesk.token }), 404, 'NOT_FOUND');
  });
});
