import { parse } from 'csv-parse/sync';
import Decimal from 'decimal.js';
import { ReportBuildJob } from '../../../src/jobs/report-build.job';
import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';
import { fundedAccount, openOrder, setQuote, setUpMarket } from '../../helpers/trading';
import { decide, walletOf, withdraw } from '../money/money-kit';
import { expect422, expectError, expectOk } from '../trading/trading-kit';
import { rolloverPassedToday, runEod } from '../eod/eod-kit';
import { buildReport, csvObjects, finish, firstPageInk, pageText, parseCsv } from './report-kit';

/**
 * Reports and statements: asked for over HTTP (202 at once), built
 * by the reports worker from one snapshot into the chunk store, downloaded with their
 * content type as an attachment; the figures of each type checked against what was booked.
 */
jest.setTimeout(120_000);

let app: TestApp;
let admin: string;
let customer: LoggedIn;
let other: LoggedIn;
let groupId: string;
let login: number;

const today = () => new Date().toISOString().slice(0, 10);
/** A statement may span 366 days: this start is well before any account of the test existed. */
const longAgo = () => new Date(Date.now() - 300 * 86_400_000).toISOString().slice(0, 10);
const sum = (values: string[]) => values.reduce((acc, v) => acc.plus(v), new Decimal(0));

async function accountBalance(l: number): Promise<string> {
  const [row] = await sql<{ balance: string }>(app, 'select balance::text as balance from accounts where login = ?', [l]);
  return row!.balance;
}

beforeAll(async () => {
  app = await startTestApp({ label: 'reports' });
  admin = await adminToken(app);
  customer = await createCustomer(app, admin);
  other = await createCustomer(app, admin);
  groupId = (await setUpMarket(app, admin)).groupId;
  login = await fundedAccount(app, admin, customer.id, groupId, 10_000);
  const first = await openOrder(app, admin, login, 0, 0.1);
  await setQuote(app, admin, 'EURUSD', 1.1012, 1.1014);
  expectOk(await app.request('POST', `/orders/${first}/close`, { token: admin }), 200, 'close');
  await openOrder(app, admin, login, 1, 0.05);
});
afterAll(() => app?.stop());

describe('account statements', () => {
  test('when a statement starts before the account existed, then opening 0 plus its rows is the closing balance, which is the ledger', async () => {
    const { report, file } = await buildReport(app, admin, {
      type: 'account_statement',
      format: 'json',
      params: { login, from: longAgo(), to: today() },
    });
    expect(report).toMatchObject({ status: 'completed', type: 'account_statement', format: 'json', error: null });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/json');
    expect(file.headers.get('content-disposition')).toMatch(
      /^attachment; filename="account-statement-\d+-\d{4}-\d\d-\d\d-\d{4}-\d\d-\d\d\.json"$/,
    );
    const body = JSON.parse(file.text);
    expect(Object.keys(body)).toEqual([
      'login',
      'currency',
      'from',
      'to',
      'opening_balance',
      'closing_balance',
      'equity',
      'ledger',
      'closed_orders',
      'open_orders',
    ]);
    expect(body).toMatchObject({ login, currency: 'USD', from: longAgo(), opening_balance: '0.00' });
    expect(body.ledger.map((r: { kind: string }) => r.kind)).toEqual(['deposit', 'trade_profit']);
    expect(sum(body.ledger.map((r: { amount: string }) => r.amount)).toFixed(2)).toBe(body.closing_balance);
    expect(body.closing_balance).toBe(await accountBalance(login));
    expect(body.ledger.at(-1).balance_after).toBe(body.closing_balance);
    expect(body.ledger[0]).toMatchObject({
      seq: expect.any(Number),
      time: expect.stringMatching(/Z$/),
      reference_type: 'deposit',
    });
    expect(body.closed_orders).toEqual([
      expect.objectContaining({
        symbol: 'EURUSD',
        cmd: 0,
        volume: 0.1,
        open_price: 1.1002,
        close_price: 1.1012,
        profit: '10.00',
      }),
    ]);
    expect(body.closed_orders[0]).toMatchObject({ commission: '0.00', swap: '0.00' });
    // The open sell at 1.1012 is valued at the ask now, 1.1014: -0.0002 x 0.05 x 100000 = -1.00.
    expect(body.open_orders).toEqual([
      expect.objectContaining({ cmd: 1, volume: 0.05, open_price: 1.1012, current_price: 1.1014, floating_profit: '-1.00' }),
    ]);
    expect(body.equity).toBe(new Decimal(body.closing_balance).minus(1).toFixed(2));
    expect(report.rows).toBe(body.ledger.length + body.closed_orders.length + body.open_orders.length);
    expect(report.bytes).toBe(file.text.length);
  });

  test('when a statement crosses days, then each day opens where the one before closed, and a period without activity holds no rows', async () => {
    // A fresh account with ledger rows on three days (bookings of the past, written as the ledger module would chain them).
    const l = await fundedAccount(app, admin, customer.id, groupId, 0);
    const [acct] = await sql<{ id: string }>(app, 'select id from accounts where login = ?', [l]);
    const rows: Array<[string, string, string, string]> = [
      ['2026-01-10T12:00:00.000Z', 'deposit', '100.00', '100.00'],
      ['2026-01-11T23:59:59.999Z', 'withdrawal', '-30.00', '70.00'],
      ['2026-01-12T00:00:00.000Z', 'adjustment', '5.55', '75.55'],
    ];
    for (const [at, kind, amount, after] of rows)
      await sql(
        app,
        `insert into ledger_entries (id, created_at, updated_at, account_id, kind, amount, balance_after)
         values (gen_random_uuid(), ?, ?, ?, ?, ?, ?)`,
        [at, at, acct!.id, kind, amount, after],
      );
    await sql(app, 'update accounts set balance = 75.55 where id = ?', [acct!.id]);

    const statement = async (from: string, to: string) =>
      JSON.parse(
        (await buildReport(app, admin, { type: 'account_statement', format: 'json', params: { login: l, from, to } })).file.text,
      );
    const day11 = await statement('2026-01-11', '2026-01-11');
    expect(day11).toMatchObject({ opening_balance: '100.00', closing_balance: '70.00', equity: '70.00', open_orders: [] });
    expect(day11.ledger.map((r: { amount: string }) => r.amount)).toEqual(['-30.00']);
    const day12 = await statement('2026-01-12', '2026-01-12');
    expect(day12).toMatchObject({ opening_balance: '70.00', closing_balance: '75.55' });
    const quiet = await statement('2025-06-01', '2025-06-30');
    expect(quiet).toMatchObject({ opening_balance: '0.00', closing_balance: '0.00', ledger: [], closed_orders: [] });
    const later = await statement('2026-02-01', '2026-02-28');
    expect(later).toMatchObject({ opening_balance: '75.55', closing_balance: '75.55', ledger: [] });
    const all = await statement('2026-01-01', '2026-12-31');
    expect(all.closing_balance).toBe(await accountBalance(l));
    expect(
      sum(all.ledger.map((r: { amount: string }) => r.amount))
        .plus(all.opening_balance)
        .toFixed(2),
    ).toBe(all.closing_balance);
  });

  test('when a statement is asked for as CSV, then one RFC 4180 table has the opening row, the rows by section and the closing rows', async () => {
    const { file } = await buildReport(app, admin, {
      type: 'account_statement',
      format: 'csv',
      params: { login, from: longAgo(), to: today() },
    });
    expect(file.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(file.text).toMatch(/\r\n$/);
    const records = csvObjects(file.text);
    expect(records.map((r) => r.section)).toEqual([
      'opening_balance',
      'ledger',
      'ledger',
      'closed_orders',
      'open_orders',
      'closing_balance',
      'equity',
    ]);
    expect(records[0]!.balance_after).toBe('0.00');
    const ledger = records.filter((r) => r.section === 'ledger');
    expect(sum(ledger.map((r) => r.amount)).toFixed(2)).toBe(records.find((r) => r.section === 'closing_balance')!.balance_after);
    expect(ledger[0]!.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // Negative amounts are numbers: never prefixed.
    expect(records.find((r) => r.section === 'open_orders')!.floating_profit).toBe('-1.00');
  });

  test('when a sample statement is rendered as PDF, then it is an A4 file whose first page carries ink', async () => {
    await sql(app, `update broker_settings set broker_name = 'Harbour Markets Ltd' where id = 1`);
    const { file, bytes } = await buildReport(app, admin, {
      type: 'account_statement',
      format: 'pdf',
      params: { login, from: longAgo(), to: today() },
    });
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    // A4 landscape in points.
    expect(bytes.toString('latin1')).toMatch(/\/MediaBox \[0 0 841\.89 595\.28\]/);
    expect(bytes.toString('latin1')).toContain('Harbour Markets Ltd');
    const ink = await firstPageInk(bytes);
    expect(ink.width).toBeGreaterThan(ink.height);
    expect(ink.dark).toBeGreaterThan(500);
  });

  test('when the ledger runs over many pages, then the PDF has a page per screenful with the page number on each', async () => {
    const l = await fundedAccount(app, admin, customer.id, groupId, 0);
    const [acct] = await sql<{ id: string }>(app, 'select id from accounts where login = ?', [l]);
    await sql(
      app,
      `insert into ledger_entries (id, created_at, updated_at, account_id, kind, amount, balance_after)
       select gen_random_uuid(), now(), now(), ?, 'adjustment', 1, g from generate_series(1, 200) g`,
      [acct!.id],
    );
    await sql(app, 'update accounts set balance = 200 where id = ?', [acct!.id]);
    const { report, bytes } = await buildReport(app, admin, {
      type: 'account_statement',
      format: 'pdf',
      params: { login: l, from: today(), to: today() },
    });
    expect(report.rows).toBe(200);
    const pages = (bytes.toString('latin1').match(/\/Type \/Page\b/g) ?? []).length;
    expect(pages).toBeGreaterThanOrEqual(5);
    for (const page of [1, 2, pages]) {
      const text = await pageText(bytes, page);
      expect(text).toContain(`Page ${page}`);
      // The table's header row again at the top of every page it runs onto.
      expect(text).toMatch(/Seq\s+Time\s+Kind\s+Amount\s+Balance after/);
    }
  });
});

describe('the other types', () => {
  test('when exposure is asked for, then long and short net per symbol with the open orders counted', async () => {
    const group = (await setUpMarket(app, admin)).groupId;
    const a = await fundedAccount(app, admin, customer.id, group, 50_000);
    const b = await fundedAccount(app, admin, other.id, group, 50_000);
    await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
    await openOrder(app, admin, a, 0, 0.3);
    await openOrder(app, admin, b, 1, 0.1);
    await openOrder(app, admin, b, 0, 0.05, 'USDJPY');
    const { file } = await buildReport(app, admin, { type: 'exposure', format: 'json', params: { group_id: group } });
    const body = JSON.parse(file.text);
    expect(body).toMatchObject({ type: 'exposure', currency: 'USD', group_id: group });
    const eur = body.symbols.find((s: { symbol: string }) => s.symbol === 'EURUSD');
    // Long 0.3 at 1.1002, short 0.1 at 1.1: net 0.2 lots x 100000 x mid 1.1001 = 22002.00 USD;
    // floating: the buy at bid 1.1 loses 0.0002 x 30000 = 6.00, the sell at ask 1.1002 loses 2.00.
    expect(eur).toEqual({
      symbol: 'EURUSD',
      long_volume: 0.3,
      short_volume: 0.1,
      net_volume: 0.2,
      net_notional: '22002.00',
      currency: 'USD',
      open_orders: 2,
      floating_profit: '-8.00',
    });
    expect(body.symbols.find((s: { symbol: string }) => s.symbol === 'USDJPY')).toMatchObject({
      long_volume: 0.05,
      short_volume: 0,
      net_volume: 0.05,
      open_orders: 1,
    });
  });

  test('when deposits and withdrawals are reported, then only completed withdrawals count', async () => {
    const ask = async () => {
      const { file } = await buildReport(app, admin, {
        type: 'deposits_withdrawals',
        format: 'csv',
        params: { from: today(), to: today() },
      });
      const row = csvObjects(file.text).find((r) => r.currency === 'USD' && r.day === today());
      return row ?? { deposits: '0', deposit_count: '0', withdrawals: '0', withdrawal_count: '0', net: '0' };
    };
    const before = await ask();
    const wallet = await walletOf(app, other);
    expectOk(
      await app.request('POST', `/api/backoffice/accounts/${wallet}/deposits`, { token: admin, body: { amount: 300 } }),
      201,
    );
    const approved = expectOk(await withdraw(app, other, 100), 202);
    const rejected = expectOk(await withdraw(app, other, 70), 202);
    expectOk(await withdraw(app, other, 50), 202); // stays pending
    expectOk(await decide(app, admin, approved.transaction_id, 'approve'), 200);
    expectOk(await decide(app, admin, rejected.transaction_id, 'reject'), 200);
    const after = await ask();
    expect(new Decimal(after.deposits).minus(before.deposits).toFixed(2)).toBe('300.00');
    expect(Number(after.deposit_count) - Number(before.deposit_count)).toBe(1);
    expect(new Decimal(after.withdrawals).minus(before.withdrawals).toFixed(2)).toBe('100.00');
    expect(Number(after.withdrawal_count) - Number(before.withdrawal_count)).toBe(1);
    expect(new Decimal(after.net).minus(before.net).toFixed(2)).toBe('200.00');
  });

  test('when trades are reported as CSV, then a comment that starts a formula is defused and negative profits stay numbers', async () => {
    const l = await fundedAccount(app, admin, customer.id, groupId, 1000);
    await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
    const res = await app.request('POST', '/orders', {
      token: admin,
      body: { login: l, symbol: 'EURUSD', cmd: 0, volume: 0.01, comment: '=HYPERLINK("http://x.invalid","go")' },
    });
    const ticket = expectOk(res, 201).order;
    expectOk(await app.request('POST', `/orders/${ticket}/close`, { token: admin }), 200);
    const { file, report } = await buildReport(app, admin, {
      type: 'trades',
      format: 'csv',
      params: { from: today(), to: today(), login: l },
    });
    const [header, ...rows] = parseCsv(file.text);
    expect(header).toEqual([
      'login',
      'ticket',
      'symbol',
      'cmd',
      'volume',
      'open_time',
      'open_price',
      'close_time',
      'close_price',
      'profit',
      'commission',
      'swap',
      'comment',
    ]);
    expect(report.rows).toBe(1);
    expect(rows[0]).toEqual([
      String(l),
      String(ticket),
      'EURUSD',
      '0',
      '0.01',
      expect.stringMatching(/Z$/),
      '1.1002',
      expect.stringMatching(/Z$/),
      '1.1',
      '-0.20',
      '0.00',
      '0.00',
      `'=HYPERLINK("http://x.invalid","go")`,
    ]);
    expect(file.text).toContain(`"'=HYPERLINK(""http://x.invalid"",""go"")"`);
  });

  test('when a customer comment holds line breaks and formulas, then the trades CSV still has one row per trade, the comment in one cell', async () => {
    const l = await fundedAccount(app, admin, customer.id, groupId, 1000);
    await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
    const comments = ['=1\n=2', '=1\r=2,=3', '\t=cmd', '  @x'];
    for (const comment of comments) {
      const ticket = expectOk(
        await app.request('POST', '/orders', {
          token: admin,
          body: { login: l, symbol: 'EURUSD', cmd: 0, volume: 0.01, comment },
        }),
        201,
      ).order;
      expectOk(await app.request('POST', `/orders/${ticket}/close`, { token: admin }), 200);
    }
    const { file } = await buildReport(app, admin, {
      type: 'trades',
      format: 'csv',
      params: { from: today(), to: today(), login: l },
    });
    // A spreadsheet ends a row at a lone CR or LF too: the parser is told so.
    const [header, ...rows] = parse(file.text, { record_delimiter: ['\r\n', '\n', '\r'] }) as string[][];
    expect(rows).toHaveLength(comments.length);
    const at = header!.indexOf('comment');
    expect(rows.map((r) => r[at]).sort()).toEqual(comments.map((c) => `'${c}`).sort());
    for (const row of rows) expect(row[0]).toBe(String(l));
  });

  test('when the daily report is asked for, then it lists the snapshot the end of day wrote for each account', async () => {
    const date = await rolloverPassedToday(app, admin);
    await runEod(app, admin, date);
    const [acct] = await sql<{ balance: string }>(app, 'select balance::text as balance from accounts where login = ?', [login]);
    const { file } = await buildReport(app, admin, { type: 'daily', format: 'json', params: { trading_date: date } });
    const body = JSON.parse(file.text);
    expect(body.snapshots.find((s: { login: number }) => s.login === login)).toMatchObject({
      login,
      trading_date: date,
      currency: 'USD',
      balance: acct!.balance,
      margin: expect.stringMatching(/^\d+\.\d\d$/),
      movements: expect.any(Object),
    });
    const { file: csv } = await buildReport(app, admin, { type: 'daily', format: 'csv', params: { trading_date: date } });
    expect(csv.text).toContain(`\n${login},${date},USD,${acct!.balance},`);
  });
});

describe('access, bad input and failures', () => {
  test('when the input is wrong, then each problem is a clear 422 at its field or a 404', async () => {
    const ask = (body: unknown, token = admin) => app.request('POST', '/api/backoffice/reports', { token, body });
    expect422(await ask({ type: 'balance_sheet', format: 'csv', params: {} }), ['body', 'type'], 'literal_error');
    expect422(await ask({ type: 'trades', format: 'xlsx', params: {} }), ['body', 'format'], 'literal_error');
    expect422(await ask({ type: 'trades', format: 'csv', params: { from: '2026-03-02', to: '2026-03-01' } }), [
      'body',
      'params',
      'from',
    ]);
    expect422(await ask({ type: 'account_statement', format: 'csv', params: { login, from: '2025-01-01', to: '2026-01-02' } }), [
      'body',
      'params',
      'to',
    ]);
    expect422(await ask({ type: 'trades', format: 'csv', params: { from: '2026-02-30', to: '2026-03-01' } }), [
      'body',
      'params',
      'from',
    ]);
    expect422(await ask({ type: 'account_statement', format: 'csv', params: { from: '2026-03-01', to: '2026-03-01' } }), [
      'body',
      'params',
      'login',
    ]);
    expectError(
      await ask({ type: 'account_statement', format: 'csv', params: { login: 999999999, from: '2026-03-01', to: '2026-03-01' } }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await ask({ type: 'exposure', format: 'csv', params: { group_id: '00000000-0000-4000-8000-000000000000' } }),
      404,
      'NOT_FOUND',
    );
    // A statement of exactly 366 days is fine.
    expectOk(
      await ask({ type: 'account_statement', format: 'json', params: { login, from: '2024-01-01', to: '2024-12-31' } }),
      202,
    );
    const [{ n }] = await sql<{ n: number }>(app, `select count(*)::int as n from reports where params->>'from' = '2026-03-02'`);
    expect(n).toBe(0);
  });

  test('when staff lack view_reports or a customer calls the staff routes, then 403; with it, 202', async () => {
    const clerk = await createStaff(app, ['view_customers'], admin);
    const body = { type: 'exposure', format: 'csv', params: {} };
    expectError(await app.request('POST', '/api/backoffice/reports', { token: clerk.token, body }), 403, 'FORBIDDEN');
    expectError(await app.request('POST', '/api/backoffice/reports', { token: customer.token, body }), 403, 'FORBIDDEN');
    const reporter = await createStaff(app, ['view_reports'], admin);
    expectOk(await app.request('POST', '/api/backoffice/reports', { token: reporter.token, body }), 202);
  });

  test('when a customer asks for statements, then only of its own accounts; another customer sees nothing of them', async () => {
    const asked = await app.request('POST', '/customers/me/statements', {
      token: customer.token,
      body: { login, from: longAgo(), to: today(), format: 'json' },
    });
    const accepted = expectOk(asked, 202);
    expect(accepted.status_url).toBe(`/customers/me/statements/${accepted.id}`);
    const { report, file } = await finish(app, customer.token, accepted.status_url);
    expect(report.download_url).toBe(`/customers/me/statements/${accepted.id}/download`);
    expect(JSON.parse(file.text).closing_balance).toBe(await accountBalance(login));

    expectError(
      await app.request('POST', '/customers/me/statements', {
        token: other.token,
        body: { login, from: longAgo(), to: today(), format: 'csv' },
      }),
      404,
      'NOT_FOUND',
    );
    expectError(await app.request('GET', accepted.status_url, { token: other.token }), 404, 'NOT_FOUND');
    expectError(await app.request('GET', report.download_url, { token: other.token }), 404, 'NOT_FOUND');
    expect422(
      await app.request('POST', '/customers/me/statements', {
        token: customer.token,
        body: { login, from: '2026-03-02', to: '2026-03-01', format: 'csv' },
      }),
      ['body', 'from'],
    );
    expect422(
      await app.request('POST', '/customers/me/statements', {
        token: customer.token,
        body: { login, from: '2025-01-01', to: '2026-01-02', format: 'csv' },
      }),
      ['body', 'to'],
    );
  });

  test('when a report is downloaded, then the download is audited with who fetched what', async () => {
    const { report } = await buildReport(app, admin, { type: 'exposure', format: 'csv', params: {} });
    const audits = await sql<{ actor_type: string; action: string }>(
      app,
      `select actor_type, action from audit_entries where entity_type = 'report' and entity_id = ?`,
      [report.id],
    );
    expect(audits).toEqual([{ actor_type: 'user', action: 'report.downloaded' }]);
  });

  test('when a build fails for good, then the report is failed, says why, and has no file to download', async () => {
    const [row] = await sql<{ id: string }>(
      app,
      `insert into reports (id, created_at, updated_at, type, format, params, status)
       values (gen_random_uuid(), now(), now(), 'account_statement', 'csv', '{"login": "nope"}', 'queued') returning id`,
    );
    await app.runtime.services.jobs.enqueue(ReportBuildJob, { report_id: row!.id });
    const { report } = await finish(app, admin, `/api/backoffice/reports/${row!.id}`);
    expect(report).toMatchObject({ status: 'failed', download_url: null, rows: null });
    expect(report.error).toMatch(/params no longer parse/);
    expectError(
      await app.request('GET', `/api/backoffice/reports/${row!.id}/download`, { token: admin }),
      409,
      'REPORT_NOT_READY',
    );
    expect(await sql(app, 'select 1 from report_chunks where report_id = ?', [row!.id])).toEqual([]);
  });

  test('when a report is still queued, then its download is 409 and its status has no download_url', async () => {
    const [row] = await sql<{ id: string }>(
      app,
      `insert into reports (id, created_at, updated_at, type, format, params, status)
       values (gen_random_uuid(), now(), now(), 'exposure', 'csv', '{}', 'queued') returning id`,
    );
    const status = expectOk(await app.request('GET', `/api/backoffice/reports/${row!.id}`, { token: admin }), 200);
    expect(status).toMatchObject({ status: 'queued', download_url: null, finished_at: null });
    expectError(
      await app.request('GET', `/api/backoffice/reports/${row!.id}/download`, { token: admin }),
      409,
      'REPORT_NOT_READY',
    );
  });
});
