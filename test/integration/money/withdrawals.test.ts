import { Writable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced } from '../../helpers/trading';
import { createLogger } from '../../../src/platform/logger';
import { eventsOf, expect422, expectError, expectOk, ledgerOf } from '../trading/trading-kit';
import { accountState, decide, expectNoOverdraft, walletOf, withdraw } from './money-kit';

/**
 * Endpoint 13 and the staff side: a request reserves the amount in the
 * wallet and waits; staff approve (the ledger debits the wallet) or reject (the reserve is
 * freed), each at most once, audited, with an event; payment data is stored as given and
 * never leaves through the list, events, audit rows or logs.
 */
let app: TestApp;
let admin: string;
let approver: LoggedIn;

const PAYMENT = { iban: 'DE02120300000000202051', holder: 'Ada Lovelace', card_token: 'tok_4242_PRIVATE' };
const REQUEST_FIELDS = ['amount', 'created_at', 'currency', 'max_withdrawable', 'message', 'status', 'transaction_id'];
const VIEW_FIELDS = ['amount', 'comment', 'created_at', 'currency', 'decided_at', 'id', 'login', 'reason', 'status'];

async function fundedCustomer(amount: number): Promise<{ customer: LoggedIn; wallet: number }> {
  const customer = await createCustomer(app, admin);
  const wallet = await walletOf(app, customer);
  expectOk(await app.request('POST', `/api/backoffice/accounts/${wallet}/deposits`, { token: admin, body: { amount } }), 201);
  return { customer, wallet };
}

async function auditOf(id: string): Promise<Array<{ action: string; before: any; after: any; actor_id: string }>> {
  const res = await app.request('GET', `/api/admin/audit?entity_type=withdrawal&entity_id=${id}`, { token: admin });
  return expectOk(res, 200).items;
}

beforeAll(async () => {
  app = await startTestApp({ label: 'withdrawals', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  approver = await createStaff(app, ['approve_withdrawals'], admin);
});
afterAll(() => app?.stop());
afterEach(async () => {
  await expectLedgerBalanced(app);
  await expectNoOverdraft(app);
});

describe('a withdrawal request', () => {
  test('when it fits the wallet, then 202 with exactly the request result, the amount reserved and nothing debited yet', async () => {
    const { customer, wallet } = await fundedCustomer(1000);
    const res = await withdraw(app, customer, 250.25, { payment_data: PAYMENT, comment: 'rent' });
    const body = expectOk(res, 202);
    expect(Object.keys(body).sort()).toEqual(REQUEST_FIELDS);
    expect(body).toMatchObject({ amount: '250.25', currency: 'USD', status: 'pending', max_withdrawable: '749.75' });
    expect(body.message).toMatch(/submitted for approval/);
    expect(new Date(body.created_at).toISOString()).toBe(body.created_at);
    expect(await accountState(app, wallet)).toMatchObject({ balance: '1000.00', reserved: '250.25' });
    expect((await ledgerOf(app, wallet)).map((r) => r.kind)).toEqual(['deposit']);

    const [stored] = await sql<{ payment_data: unknown; status: string; login: string }>(
      app,
      'select payment_data, status, login::text as login from withdrawals where id = ?',
      [body.transaction_id],
    );
    expect(stored).toEqual({ payment_data: PAYMENT, status: 'pending', login: String(wallet) });
  });

  test('when it is requested, then one withdrawal.requested event carries the staff view and no payment data', async () => {
    const { customer, wallet } = await fundedCustomer(100);
    const body = expectOk(await withdraw(app, customer, 10, { payment_data: PAYMENT }), 202);
    const events = await eventsOf(app, 'withdrawal.requested', body.transaction_id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ aggregate_type: 'withdrawal', customer_id: customer.id });
    expect(events[0]!.data).toEqual({
      id: body.transaction_id,
      login: wallet,
      amount: '10.00',
      currency: 'USD',
      status: 'pending',
      reason: null,
      comment: null,
      created_at: body.created_at,
      decided_at: null,
    });
  });

  test('when requests add up past the wallet, then the one that does not fit is 422 at amount saying what is available', async () => {
    const { customer, wallet } = await fundedCustomer(100);
    expectOk(await withdraw(app, customer, 60), 202);
    const res = await withdraw(app, customer, 40.01);
    expect422(res, ['body', 'amount']);
    expect(res.body.detail[0].msg).toMatch(/40\.00 USD available/);
    const last = expectOk(await withdraw(app, customer, 40), 202);
    expect(last.max_withdrawable).toBe('0.00');
    expect(await accountState(app, wallet)).toMatchObject({ balance: '100.00', reserved: '100.00' });
  });

  test.each([
    ['an amount with three decimals', { amount: 1.005, payment_data: {} }, ['body', 'amount']],
    ['a zero amount', { amount: 0, payment_data: {} }, ['body', 'amount']],
    ['no payment_data', { amount: 1 }, ['body', 'payment_data']],
    ['payment_data as an array', { amount: 1, payment_data: ['x'] }, ['body', 'payment_data']],
    ['payment_data as text', { amount: 1, payment_data: 'IBAN DE02' }, ['body', 'payment_data']],
    ['payment_data over 4 KB', { amount: 1, payment_data: { note: 'x'.repeat(4096) } }, ['body', 'payment_data']],
    ['a comment over 500 characters', { amount: 1, payment_data: {}, comment: 'c'.repeat(501) }, ['body', 'comment']],
  ])('when the body has %s, then 422 at that field and nothing is reserved', async (_what, body, loc) => {
    const { customer, wallet } = await fundedCustomer(10);
    expect422(await app.request('POST', '/customers/me/withdraw', { token: customer.token, body }), loc);
    expect((await accountState(app, wallet)).reserved).toBe('0.00');
  });

  test('when payment_data is just within 4 KB, then it is accepted and stored unchanged', async () => {
    const { customer } = await fundedCustomer(10);
    const payment = { note: 'é'.repeat(2000) }; // 4,000 bytes of UTF-8 plus the JSON around it
    expect(Buffer.byteLength(JSON.stringify(payment))).toBeLessThanOrEqual(4096);
    const body = expectOk(await withdraw(app, customer, 1, { payment_data: payment }), 202);
    const [row] = await sql<{ payment_data: unknown }>(app, 'select payment_data from withdrawals where id = ?', [
      body.transaction_id,
    ]);
    expect(row!.payment_data).toEqual(payment);
  });

  test('when the same Idempotency-Key and body come twice, then one withdrawal is reserved and the answer replayed', async () => {
    const { customer, wallet } = await fundedCustomer(100);
    const first = expectOk(await withdraw(app, customer, 30, { key: 'wd-1' }), 202);
    const second = await withdraw(app, customer, 30, { key: 'wd-1' });
    expect(second.status).toBe(202);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first);
    expect((await accountState(app, wallet)).reserved).toBe('30.00');
    expect422(await withdraw(app, customer, 31, { key: 'wd-1' }), ['header', 'Idempotency-Key']);
  });

  test('when staff call it, then 403; when the customer lists its own, then it sees them without payment data', async () => {
    expectError(
      await app.request('POST', '/customers/me/withdraw', { token: admin, body: { amount: 1, payment_data: {} } }),
      403,
      'FORBIDDEN',
    );
    const { customer } = await fundedCustomer(100);
    const a = expectOk(await withdraw(app, customer, 1, { payment_data: PAYMENT }), 202);
    const b = expectOk(await withdraw(app, customer, 2, { payment_data: PAYMENT }), 202);
    const mine = expectOk(await app.request('GET', '/customers/me/withdrawals', { token: customer.token }), 200);
    expect(mine.items.map((w: { id: string }) => w.id)).toEqual([b.transaction_id, a.transaction_id]);
    expect(JSON.stringify(mine)).not.toContain(PAYMENT.card_token);
  });
});

describe('staff decide a withdrawal', () => {
  test('when it is approved, then the wallet is debited through the ledger, the reserve released, audited and announced', async () => {
    const { customer, wallet } = await fundedCustomer(500);
    const request = expectOk(await withdraw(app, customer, 120, { payment_data: PAYMENT, comment: 'holiday' }), 202);
    const res = await decide(app, approver.token, request.transaction_id, 'approve');
    const view = expectOk(res, 200);
    expect(Object.keys(view).sort()).toEqual(VIEW_FIELDS);
    expect(view).toMatchObject({
      id: request.transaction_id,
      login: wallet,
      amount: '120.00',
      status: 'completed',
      reason: null,
      comment: 'holiday',
    });
    expect(view.decided_at).not.toBeNull();
    expect(await accountState(app, wallet)).toMatchObject({ balance: '380.00', reserved: '0.00' });
    const rows = await ledgerOf(app, wallet);
    expect(rows[rows.length - 1]).toMatchObject({
      kind: 'withdrawal',
      amount: '-120.00',
      balance_after: '380.00',
      reference_type: 'withdrawal',
      reference_id: request.transaction_id,
    });

    const audit = await auditOf(request.transaction_id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: 'withdrawal.approved', actor_id: approver.id, after: view });
    expect(audit[0]!.before).toMatchObject({ status: 'pending', decided_at: null });
    const events = await eventsOf(app, 'withdrawal.approved', request.transaction_id);
    expect(events.map((e) => e.data)).toEqual([view]);
    expect(JSON.stringify([audit, events])).not.toContain(PAYMENT.iban);
  });

  test('when it is rejected, then the reserve is freed with the reason, nothing is booked, audited and announced', async () => {
    const { customer, wallet } = await fundedCustomer(500);
    const request = expectOk(await withdraw(app, customer, 200), 202);
    const view = expectOk(await decide(app, approver.token, request.transaction_id, 'reject', 'Name does not match'), 200);
    expect(view).toMatchObject({ status: 'rejected', reason: 'Name does not match' });
    expect(await accountState(app, wallet)).toMatchObject({ balance: '500.00', reserved: '0.00' });
    expect((await ledgerOf(app, wallet)).map((r) => r.kind)).toEqual(['deposit']);
    expect((await auditOf(request.transaction_id)).map((a) => a.action)).toEqual(['withdrawal.rejected']);
    expect((await eventsOf(app, 'withdrawal.rejected', request.transaction_id)).map((e) => e.data)).toEqual([view]);
    // The freed amount is withdrawable again.
    expect(expectOk(await withdraw(app, customer, 500), 202).max_withdrawable).toBe('0.00');
  });

  test('when a decided withdrawal is decided again, then 409 WITHDRAWAL_NOT_PENDING and nothing changes', async () => {
    const { customer, wallet } = await fundedCustomer(100);
    const approved = expectOk(await withdraw(app, customer, 10), 202).transaction_id;
    const rejected = expectOk(await withdraw(app, customer, 10), 202).transaction_id;
    expectOk(await decide(app, approver.token, approved, 'approve'), 200);
    expectOk(await decide(app, approver.token, rejected, 'reject'), 200);
    const state = await accountState(app, wallet);
    for (const [id, how] of [
      [approved, 'approve'],
      [approved, 'reject'],
      [rejected, 'approve'],
      [rejected, 'reject'],
    ] as const)
      expectError(await decide(app, approver.token, id, how), 409, 'WITHDRAWAL_NOT_PENDING');
    expect(await accountState(app, wallet)).toEqual(state);
    expect(await auditOf(approved)).toHaveLength(1);
  });

  test('when staff retry an approval with the same Idempotency-Key, then the first answer is replayed, not a 409', async () => {
    const { customer, wallet } = await fundedCustomer(100);
    const id = expectOk(await withdraw(app, customer, 25), 202).transaction_id;
    const send = () =>
      app.request('POST', `/api/backoffice/withdrawals/${id}/approve`, {
        token: approver.token,
        headers: { 'idempotency-key': `ap-${id}` },
      });
    const first = expectOk(await send(), 200);
    const again = await send();
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first);
    expect(await accountState(app, wallet)).toMatchObject({ balance: '75.00', reserved: '0.00' });
  });

  test('when an approve and a reject race, then one answers 200 and the other 409, and the money moves once', async () => {
    const { customer, wallet } = await fundedCustomer(1000);
    for (let round = 0; round < 10; round++) {
      const id = expectOk(await withdraw(app, customer, 10), 202).transaction_id;
      const [approve, reject] = await Promise.all([
        decide(app, approver.token, id, 'approve'),
        decide(app, approver.token, id, 'reject'),
      ]);
      expect([approve.status, reject.status].sort()).toEqual([200, 409]);
      const loser = approve.status === 409 ? approve : reject;
      expect(loser.body.code).toBe('WITHDRAWAL_NOT_PENDING');
      const [row] = await sql<{ status: string }>(app, 'select status from withdrawals where id = ?', [id]);
      expect(row!.status).toBe(approve.status === 200 ? 'completed' : 'rejected');
      expect(await auditOf(id)).toHaveLength(1);
    }
    const state = await accountState(app, wallet);
    const completed = await sql<{ n: string }>(
      app,
      `select count(*)::text as n from withdrawals where login = ? and status = 'completed'`,
      [wallet],
    );
    expect(state.reserved).toBe('0.00');
    expect(Number(state.balance)).toBe(1000 - 10 * Number(completed[0]!.n));
  });

  test('when the withdrawal does not exist, then 404; without approve_withdrawals or as a customer, then 403', async () => {
    expectError(await decide(app, approver.token, randomUUID(), 'approve'), 404, 'NOT_FOUND');
    const { customer } = await fundedCustomer(10);
    const id = expectOk(await withdraw(app, customer, 1), 202).transaction_id;
    const clerk = await createStaff(app, ['view_customers'], admin);
    expectError(await decide(app, clerk.token, id, 'approve'), 403, 'FORBIDDEN');
    expectError(await decide(app, customer.token, id, 'approve'), 403, 'FORBIDDEN');
    expectError(await app.request('GET', '/api/backoffice/withdrawals', { token: clerk.token }), 403, 'FORBIDDEN');
    expect422(
      await app.request('POST', `/api/backoffice/withdrawals/${id}/reject`, { token: approver.token, body: { reason: '' } }),
      ['body', 'reason'],
    );
  });
});

describe('staff list withdrawals', () => {
  test('when filtered by status and login and paged, then newest first without payment data; one withdrawal shows it', async () => {
    const { customer, wallet } = await fundedCustomer(100);
    const ids: string[] = [];
    for (let i = 1; i <= 3; i++)
      ids.push(expectOk(await withdraw(app, customer, i, { payment_data: PAYMENT }), 202).transaction_id);
    expectOk(await decide(app, approver.token, ids[0]!, 'approve'), 200);

    const all = expectOk(await app.request('GET', `/api/backoffice/withdrawals?login=${wallet}`, { token: approver.token }), 200);
    expect(all.items.map((w: { id: string }) => w.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(all.total).toBe(3);
    expect(JSON.stringify(all)).not.toContain(PAYMENT.card_token);

    const pending = expectOk(
      await app.request('GET', `/api/backoffice/withdrawals?login=${wallet}&status=pending&page=2&page_size=1`, {
        token: approver.token,
      }),
      200,
    );
    expect(pending).toMatchObject({ page: 2, page_size: 1, total: 2 });
    expect(pending.items.map((w: { id: string }) => w.id)).toEqual([ids[1]]);

    const one = expectOk(await app.request('GET', `/api/backoffice/withdrawals/${ids[1]}`, { token: approver.token }), 200);
    expect(one).toMatchObject({ id: ids[1], customer_id: customer.id, payment_data: PAYMENT, decided_by: null });
    expect422(await app.request('GET', '/api/backoffice/withdrawals?status=done', { token: approver.token }), [
      'query',
      'status',
    ]);
  });
});

describe('payment data stays out of the logs', () => {
  test('when a withdrawal fails in the database with the payment data in the error, then no log line carries it', async () => {
    const { customer } = await fundedCustomer(100);
    // A trigger that fails the insert and quotes the payment data in its message and detail:
    // what a constraint or type error on that value would do.
    await sql(
      app,
      `create function withdrawals_refuse() returns trigger language plpgsql as $$
       begin raise exception 'refused %', new.payment_data using detail = new.payment_data::text; end $$`,
    );
    await sql(
      app,
      'create trigger withdrawals_refuse before insert on withdrawals for each row execute function withdrawals_refuse()',
    );
    try {
      const res = await withdraw(app, customer, 5, { payment_data: PAYMENT });
      expectError(res, 500, 'INTERNAL');
      expect(res.text).not.toContain(PAYMENT.card_token);
    } finally {
      await sql(app, 'drop trigger withdrawals_refuse on withdrawals');
      await sql(app, 'drop function withdrawals_refuse()');
    }
    const failed = app.logs.find((l) => l.msg === 'unhandled error');
    expect(failed).toBeDefined();
    const text = JSON.stringify(app.logs);
    for (const secret of [PAYMENT.card_token, PAYMENT.iban, PAYMENT.holder]) expect(text).not.toContain(secret);
  });

  test('when some code logs a body, a record or a nested request with payment_data, then the logger censors it', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const logger = createLogger('info', sink);
    logger.info({ payment_data: PAYMENT }, 'top level');
    logger.info({ body: { amount: 1, payment_data: PAYMENT } }, 'a body');
    logger.info({ req: { body: { payment_data: PAYMENT } } }, 'a request');
    logger.info({ withdrawal: { paymentData: PAYMENT } }, 'an entity');
    logger.info({ job: { data: { body: { payment_data: PAYMENT } } } }, 'deeper');
    expect(lines).toHaveLength(5);
    for (const line of lines) {
      expect(line).toContain('[redacted]');
      expect(line).not.toContain(PAYMENT.card_token);
    }
  });
});
