import type { EntityManager } from '@mikro-orm/postgresql';
import { cancelPendingOfDisabledAccounts, expireDuePendingOrders } from '../../../src/domain/orders/pending-orders';
import { adminToken, createCustomer } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { scaled } from '../../helpers/test-scale';
import { fundedAccount } from '../../helpers/trading';
import { group, usdInstrument } from './engine-kit';
import { sql } from './trading-kit';

/**
 * The expiry sweep takes row locks in one global order and never an account's, so it cannot
 * deadlock with what locks accounts (transfers lock both accounts in id order, placements
 * their account) or orders (owners cancelling, the trading_disabled sweep). Each round writes
 * orders already due on every account and runs two sweeps beside transfers both ways, new
 * placements and cancellations, all at once; no statement may fail with 40P01 (deadlock
 * detected), and Postgres's own deadlock counter for the database stays where it was.
 */
jest.setTimeout(180_000);

let app: TestApp;
let admin: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'expiry-locks' });
  admin = await adminToken(app);
  await usdInstrument(app, admin, 'NZDUSD', 0.6, 0.6002);
});
afterAll(() => app?.stop());

const deadlocks = async () => {
  const [row] = await sql<{ n: string }>(
    app,
    'select pg_stat_clear_snapshot(), (select deadlocks from pg_stat_database where datname = current_database())::text as n',
  );
  return Number(row!.n);
};

const isDeadlock = (err: unknown) => JSON.stringify(err, Object.getOwnPropertyNames(err as object)).includes('40P01');

test('when expiry sweeps run beside transfers, placements and cancellations in a loop, then no deadlock is detected', async () => {
  const groupId = await group(app, admin);
  const customer = await createCustomer(app, admin);
  const logins: number[] = [];
  for (let i = 0; i < 4; i++) logins.push(await fundedAccount(app, admin, customer.id, groupId, 100_000));
  const ids = (await sql<{ id: string }>(app, 'select id from accounts where login in (?, ?, ?, ?) order by login', logins)).map(
    (r) => r.id,
  );
  const before = await deadlocks();
  const failures: string[] = [];
  let found = 0;
  const guard = async (what: string, work: () => Promise<unknown>) => {
    try {
      const res = (await work()) as { status?: number; text?: string } | undefined;
      if (res && typeof res.status === 'number' && res.status >= 500) failures.push(`${what}: ${res.status} ${res.text}`);
    } catch (err) {
      if (isDeadlock(err)) found++;
      else failures.push(`${what}: ${String(err)}`);
    }
  };
  const fork = () => app.runtime.services.orm.em.fork() as EntityManager;
  const rounds = scaled(12, 4);
  for (let round = 0; round < rounds; round++) {
    // Orders already due, on every account, interleaved so ticket order crosses accounts.
    await sql(
      app,
      `insert into pending_orders (id, created_at, updated_at, request_id, account_id, login, symbol, cmd, volume, trigger_price, expiry_at)
       select gen_random_uuid(), now(), now(), gen_random_uuid(), a.id, a.login, 'NZDUSD', 2, 0.01, 0.5, now() - interval '1 second'
         from generate_series(1, 8) g, accounts a where a.login in (?, ?, ?, ?) order by g, a.login desc`,
      logins,
    );
    const work: Array<Promise<void>> = [];
    work.push(guard('sweep', () => expireDuePendingOrders(fork())));
    work.push(guard('sweep', () => expireDuePendingOrders(fork())));
    for (let i = 0; i < logins.length; i++) {
      const [from, to] = [logins[i]!, logins[(i + 1) % logins.length]!];
      work.push(
        guard('transfer', () =>
          app.request('POST', '/customers/me/transfer', {
            token: customer.token,
            body: { from_login: from, to_login: to, amount: 1 },
          }),
        ),
      );
      work.push(
        guard('transfer back', () =>
          app.request('POST', '/customers/me/transfer', {
            token: customer.token,
            body: { from_login: to, to_login: from, amount: 1 },
          }),
        ),
      );
      work.push(
        guard('place', () =>
          app.request('POST', '/orders/pending', {
            token: customer.token,
            body: { login: from, symbol: 'NZDUSD', cmd: 2, volume: 0.01, trigger_price: 0.5 },
          }),
        ),
      );
    }
    work.push(guard('disabled sweep', () => cancelPendingOfDisabledAccounts(fork(), ids)));
    await Promise.all(work);
  }
  // Whatever a sweep skipped (held by another) the next one takes.
  await expireDuePendingOrders(fork());
  const [left] = await sql<{ n: string }>(
    app,
    `select count(*)::text as n from pending_orders where login in (?, ?, ?, ?) and expiry_at <= now() and status in ('pending', 'triggered')`,
    logins,
  );
  expect(left!.n).toBe('0');
  expect(failures).toEqual([]);
  expect(found).toBe(0);
  await new Promise((r) => setTimeout(r, 1200));
  expect((await deadlocks()) - before).toBe(0);
});
