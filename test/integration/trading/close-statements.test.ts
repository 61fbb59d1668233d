import { AsyncLocalStorage } from 'node:async_hooks';
import type * as pg from 'pg';
import type { EntityManager } from '@mikro-orm/postgresql';
import { adminToken, createCustomer } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, openOrder, setUpMarket } from '../../helpers/trading';
import { expectOk } from './trading-kit';
import { group } from './engine-kit';
import { closeOrder } from '../../../src/domain/orders/close-order';
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
async function statementsOfClose(ticket: number): Promise<string[]> {
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
    const outcome = await closing.run(true, () => closeOrder(em, app.runtime.services.quotes, String(ticket), 'manual'));
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

test('when the account holds a bonus, then the close runs in a transaction with its hooks', async () => {
  const customer = await createCustomer(app, admin);
  const login = await fundedAccount(app, admin, customer.id, groupId);
  const programme = expectOk(
    await app.request('POST', '/api/crm/bonus-programs', {
      token: admin,
      body: {
        name: 'Per lot',
        currency: 'USD',
        kind: 'fixed',
        amount: 100,
        group_ids: [groupId],
        trigger: 'manual',
        first_deposit_only: false,
        release: { mode: 'per_lot', lots_per_unit: 0.1 },
        on_transfer_out: 'forfeit',
        enabled: true,
      },
    }),
    201,
  ).id as string;
  expectOk(
    await app.request('POST', `/api/crm/customers/${customer.id}/bonuses`, {
      token: admin,
      body: { program_id: programme, login },
    }),
    201,
  );
  const ticket = await openOrder(app, admin, login, 0, 1);
  await sql(app, `update orders set created_at = now() - interval '5 minutes' where ticket = ?`, [ticket]);
  const sent = await statementsOfClose(ticket);
  expect(transactionOf(sent).map((s) => s.toLowerCase())).toEqual(['begin', 'commit']);
  expect(sent.filter((s) => s.includes('update orders set status'))).toHaveLength(1);
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
  // The first close finds the partner under the lock and books nothing before its transaction; the
  // next goes to the transaction at once.
  expect(closes.map((sent) => sent.filter((s) => s.includes('update orders set status')).length)).toEqual([2, 1]);
  expect(
    await sql(app, `select count(*)::int as n from ib_accruals a join orders o on o.ticket = a.ticket where o.login = ?`, [
      login,
    ]),
  ).toEqual([{ n: 2 }]);
});
