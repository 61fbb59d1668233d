import { AsyncLocalStorage } from 'node:async_hooks';
import type * as pg from 'pg';
import type { EntityManager } from '@mikro-orm/postgresql';
import { adminToken, createCustomer } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, openOrder, setUpMarket } from '../../helpers/trading';
import { expectOk } from './trading-kit';
import { group } from './engine-kit';
import { closeOrder, loadPricingTerms, type PricingSource } from '../../../src/domain/orders/close-order';
import { attribute, partner, plan } from '../partners/partners-kit';

jest.setTimeout(120_000);

/**
 * What a close sends to Postgres, statement by statement: a close that no hook has work for is
 * its one closing statement, without a transaction around it, and a close a hook has work for
 * runs in a transaction with it.
 */
let app: TestApp;
let admin: string;
let groupId: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'close-statements', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  ({ groupId } = await setUpMarket(app, admin));
});
afterAll(() => app?.stop());
afterEach(() => expectLedgerBalanced(app));

const closing = new AsyncLocalStorage<boolean>();

/** Closes the order through closeOrder and answers the SQL it sent, in order. */
async function statementsOfClose(ticket: number, termsOf: PricingSource = loadPricingTerms): Promise<string[]> {
  const sent: string[] = [];
  const em = app.runtime.services.orm.em.fork() as EntityManager;
  // The ORM's driver brings a `pg` of its own: its pool's client class is the one to watch.
  const pool = await em.getConnection().getNativeClient();
  const probe = await pool.connect();
  const client = Object.getPrototypeOf(probe).constructor as typeof pg.Client;
  probe.release();
  const query = client.prototype.query;
  const spy = jest.spyOn(client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
    // Only what the close sends: the service's own background work runs outside it.
    if (closing.getStore()) sent.push(String(text).trim().replace(/\s+/g, ' '));
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as never);
  try {
    const outcome = await closing.run(true, () =>
      closeOrder(em, app.runtime.services.quotes, String(ticket), 'manual', null, termsOf),
    );
    expect(outcome).toMatchObject({ kind: 'closed', booked: true });
  } finally {
    spy.mockRestore();
  }
  if (process.env.SHOW_CLOSE_STATEMENTS) console.log(`${sent.length} statements\n${sent.map((s) => s.slice(0, 100)).join('\n')}`);
  return sent;
}

const transactionOf = (sent: string[]) => sent.filter((s) => /^(begin|commit|start transaction)/i.test(s));

test('when no hook has work for a close, then it is one closing statement and no transaction', async () => {
  const customer = await createCustomer(app, admin);
  const login = await fundedAccount(app, admin, customer.id, groupId);
  const ticket = await openOrder(app, admin, login);
  const sent = await statementsOfClose(ticket);
  expect(transactionOf(sent)).toEqual([]);
  expect(sent.filter((s) => s.includes('update orders set status'))).toHaveLength(1);
});

/** A customer's funded account holding a bonus of 100 on a programme releasing as `release` says. */
async function withBonus(release: { mode: 'per_lot' | 'on_target'; lots_per_unit: number }) {
  const customer = await createCustomer(app, admin);
  const login = await fundedAccount(app, admin, customer.id, groupId);
  const programme = expectOk(
    await app.request('POST', '/api/crm/bonus-programs', {
      token: admin,
      body: {
        name: `Bonus ${release.mode} ${login}`,
        currency: 'USD',
        kind: 'fixed',
        amount: 100,
        group_ids: [groupId],
        trigger: 'manual',
        first_deposit_only: false,
        release,
        on_transfer_out: 'forfeit',
        enabled: true,
      },
    }),
    201,
  ).id as string;
  const bonus = expectOk(
    await app.request('POST', `/api/crm/customers/${customer.id}/bonuses`, {
      token: admin,
      body: { program_id: programme, login },
    }),
    201,
  ).id as string;
  return { login, bonus };
}

test('when a close releases part of a bonus, then its guarded statement is held and it runs in a transaction with its hooks', async () => {
  const { login } = await withBonus({ mode: 'per_lot', lots_per_unit: 0.1 });
  const ticket = await openOrder(app, admin, login, 0, 1);
  await sql(app, `update orders set created_at = now() - interval '5 minutes' where ticket = ?`, [ticket]);
  const sent = await statementsOfClose(ticket);
  expect(transactionOf(sent).map((s) => s.toLowerCase())).toEqual(['begin', 'commit']);
  // The guarded statement finds a release under the lock and books nothing; the transaction closes.
  expect(sent.filter((s) => s.includes('update orders set status'))).toHaveLength(2);
  // The client has no partner, as the read before the close said: the chain's part is left out.
  expect(sent.filter((s) => s.includes('ib_chain'))).toEqual([]);
  expect(
    await sql(
      app,
      `select count(*)::int as n from ledger_entries l join accounts a on a.id = l.account_id
        where a.login = ? and l.kind = 'bonus_release'`,
      [login],
    ),
  ).toEqual([{ n: 2 }]);
});

test('when a close counts toward a bonus and releases nothing, then it is one statement with no transaction', async () => {
  const { login, bonus } = await withBonus({ mode: 'on_target', lots_per_unit: 10 });
  const ticket = await openOrder(app, admin, login, 0, 1);
  await sql(app, `update orders set created_at = now() - interval '5 minutes' where ticket = ?`, [ticket]);
  const sent = await statementsOfClose(ticket);
  expect(transactionOf(sent)).toEqual([]);
  const closing = sent.filter((s) => s.includes('update orders set status'));
  expect(closing).toHaveLength(1);
  expect(closing[0]).toContain('turnover_bonus');
  expect(
    await sql(app, `select lots_done::text as lots_done, released::text as released, status from bonuses where id = ?`, [bonus]),
  ).toEqual([{ lots_done: '1.00', released: '0.00', status: 'active' }]);
  // order.closed, then bonus.progress, in that order.
  const events = await sql<{ type: string }>(
    app,
    `select type from domain_events
      where ((aggregate_type = 'order' and aggregate_id = ?::text) or (aggregate_type = 'bonus' and aggregate_id = ?::text))
        and type not in ('bonus.granted', 'order.opened')
      order by seq`,
    [String(ticket), bonus],
  );
  expect(events.map((e) => e.type)).toEqual(['order.closed', 'bonus.progress']);
});

test('when the client trades under a partner, then the close runs in a transaction with its hooks', async () => {
  const planId = await plan(app, admin, { charge: 'instant' });
  const ib = await partner(app, admin, planId);
  const client = await createCustomer(app, admin);
  expectOk(await attribute(app, admin, client.id, ib.id), 200);
  // A group charging commission, so the close earns the partner something.
  const charging = await group(app, admin, { commission_type: 'per_lot', commission_value: 1.75 });
  const login = await fundedAccount(app, admin, client.id, charging);
  const closes: string[][] = [];
  for (const _ of [1, 2]) {
    const ticket = await openOrder(app, admin, login, 0, 1);
    await sql(app, `update orders set created_at = now() - interval '5 minutes' where ticket = ?`, [ticket]);
    closes.push(await statementsOfClose(ticket));
  }
  for (const sent of closes) expect(transactionOf(sent).map((s) => s.toLowerCase())).toEqual(['begin', 'commit']);
  // The read before the close says the client has a partner: each close goes to the transaction at once.
  expect(closes.map((sent) => sent.filter((s) => s.includes('update orders set status')).length)).toEqual([1, 1]);
  // Once the process holds the rules, the close's fraud evaluation rides on the accruals' insert:
  // the one statement that reads the stamp inserts both.
  const stamped = closes[1]!.filter((s) => s.includes('fraud_rules_stamp'));
  expect(stamped).toHaveLength(1);
  expect(stamped[0]).toContain('insert into ib_accruals');
  expect(
    await sql(
      app,
      `select count(*)::int as n from fraud_evaluations f join orders o on f.reference_id = o.ticket::text
        where f.event = 'ib_accrual' and f.reference_type = 'order' and f.decision = 'allow' and o.login = ?`,
      [login],
    ),
  ).toEqual([{ n: 2 }]);
  expect(
    await sql(app, `select count(*)::int as n from ib_accruals a join orders o on o.ticket = a.ticket where o.login = ?`, [
      login,
    ]),
  ).toEqual([{ n: 2 }]);
});

test('when the read before the close says no partner but one was attributed since, then the guarded statement is held and the transaction accrues', async () => {
  const planId = await plan(app, admin, { charge: 'instant' });
  const ib = await partner(app, admin, planId);
  const client = await createCustomer(app, admin);
  const charging = await group(app, admin, { commission_type: 'per_lot', commission_value: 1.75 });
  const login = await fundedAccount(app, admin, client.id, charging);
  const ticket = await openOrder(app, admin, login, 0, 1);
  await sql(app, `update orders set created_at = now() - interval '5 minutes' where ticket = ?`, [ticket]);
  // A stale read (a bulk close's run keeps it for a while): it says no partner.
  const stale: PricingSource = async (em, accountId, symbol) => {
    const read = await loadPricingTerms(em, accountId, symbol);
    return { ...read, account: { ...read.account, referred: false } };
  };
  expectOk(await attribute(app, admin, client.id, ib.id, 'Attributed after the read'), 200);
  const sent = await statementsOfClose(ticket, stale);
  // The guarded statement finds the partner under the lock and books nothing; the transaction closes and accrues.
  expect(sent.filter((s) => s.includes('update orders set status'))).toHaveLength(2);
  expect(transactionOf(sent).map((s) => s.toLowerCase())).toEqual(['begin', 'commit']);
  expect(
    await sql(app, `select count(*)::int as n from ib_accruals a join orders o on o.ticket = a.ticket where o.login = ?`, [
      login,
    ]),
  ).toEqual([{ n: 1 }]);
});

test('when the fraud rules change between the decision and the accruals, then nothing is inserted on the old decision and the close evaluates again', async () => {
  const planId = await plan(app, admin, { charge: 'daily' });
  const ib = await partner(app, admin, planId);
  const client = await createCustomer(app, admin);
  expectOk(await attribute(app, admin, client.id, ib.id), 200);
  const charging = await group(app, admin, { commission_type: 'per_lot', commission_value: 1.75 });
  const login = await fundedAccount(app, admin, client.id, charging);
  const tickets = [await openOrder(app, admin, login, 0, 1), await openOrder(app, admin, login, 0, 1)];
  await sql(app, `update orders set created_at = now() - interval '5 minutes' where login = ?`, [login]);
  // The first close leaves the process holding the rules.
  await statementsOfClose(tickets[0]!);
  // A change of the rules elsewhere: the copy held is stale.
  await sql(app, `update fraud_rules_stamp set stamp = gen_random_uuid() where id = 1`, []);
  const sent = await statementsOfClose(tickets[1]!);
  // The accruals' insert carrying the evaluation wrote nothing; the evaluation ran again, then the plain insert.
  expect(sent.filter((s) => s.includes('insert into ib_accruals'))).toHaveLength(2);
  expect(await sql(app, `select count(*)::int as n from ib_accruals where ticket = ?`, [tickets[1]])).toEqual([{ n: 1 }]);
  expect(
    await sql(app, `select count(*)::int as n from fraud_evaluations where event = 'ib_accrual' and reference_id = ?::text`, [
      String(tickets[1]),
    ]),
  ).toEqual([{ n: 1 }]);
});
