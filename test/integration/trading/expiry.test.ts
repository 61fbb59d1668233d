import { adminToken, createCustomer } from '../../helpers/identity';
import { startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, setUpMarket } from '../../helpers/trading';
import { ExpirePendingOrdersJob } from '../../../src/jobs/expire-pending-orders.job';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ label: 'expiry' });
});
afterAll(() => app?.stop());

test('when a pending order passes its expiry, then it cannot be modified and the sweep marks it expired with an event', async () => {
  const token = await adminToken(app);
  const market = await setUpMarket(app, token);
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, market.groupId);
  const placed = await app.request('POST', '/orders/pending', {
    token,
    body: {
      login,
      symbol: 'EURUSD',
      cmd: 2,
      volume: 0.1,
      trigger_price: 1.09,
      expiry_at: new Date(Date.now() + 1500).toISOString(),
    },
  });
  expect(placed.status).toBe(201);
  // Past expiry_at the order refuses changes even before the sweep has marked it.
  const patch = await waitFor('the order to pass its expiry', async () => {
    const res = await app.request('PATCH', `/orders/pending/${placed.body.order}?login=${login}`, { token, body: { tp: 1.2 } });
    return res.status === 200 ? undefined : res;
  });
  expect(patch.status).toBe(409);
  expect(patch.body.code).toBe('ORDER_NOT_PENDING');

  const job = await app.runtime.services.jobs.enqueue(ExpirePendingOrdersJob, {});
  await app.runtime.services.queueEvents.waitFor(job, 10_000);
  const listed = await waitFor('expired', async () => {
    const res = await app.request('GET', `/orders/pending?login=${login}`, { token });
    return res.body.items[0].status === 'expired' ? res.body.items[0] : undefined;
  });
  expect(listed.order).toBe(placed.body.order);
  const events = await app.runtime.services.orm.em
    .fork()
    .getConnection()
    .execute("select count(*)::int as n from domain_events where type = 'pending_order.expired' and aggregate_id = ?", [
      String(placed.body.order),
    ]);
  expect(events[0].n).toBe(1);
  await expectLedgerBalanced(app);
});

test('when anyone truncates the ledger, then the database refuses', async () => {
  const conn = app.runtime.services.orm.em.fork().getConnection();
  await expect(conn.execute('truncate ledger_entries')).rejects.toThrow(/append-only/);
});
