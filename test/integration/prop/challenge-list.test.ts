import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { setQuote, setUpMarket, type Market } from '../../helpers/trading';
import { eventsOf, expect422, expectError, expectOk } from '../trading/trading-kit';

/**
 * Staff's view of prop challenges: the list, filtered and paged, and one stage with the rules
 * it is judged by, the figures a breach is measured against, and the other stages of its run.
 */
jest.setTimeout(120_000);

let app: TestApp;
let admin: string;
let market: Market;

const phase = (p: Record<string, unknown> = {}) => ({
  name: 'Evaluation',
  profit_target_pct: 10,
  max_daily_loss_pct: 5,
  max_total_loss_pct: 10,
  total_loss_mode: 'static',
  min_trading_days: 0,
  max_trading_days: null,
  ...p,
});

async function program(phases: unknown[]): Promise<string> {
  const body = expectOk(
    await app.request('POST', '/prop/programs', {
      token: admin,
      body: {
        name: `Program ${Math.random().toString(36).slice(2, 8)}`,
        currency: 'USD',
        initial_balance: 10000,
        group_id: market.groupId,
        profit_split_pct: 80,
        phases,
      },
    }),
    201,
  );
  return body.id as string;
}

async function start(programId: string, customer: LoggedIn) {
  return expectOk(
    await app.request('POST', '/prop/challenges', { token: admin, body: { program_id: programId, customer_id: customer.id } }),
    201,
  );
}

const list = async (query: string) => expectOk(await app.request('GET', `/prop/challenges${query}`, { token: admin }), 200);
const detail = async (id: string) => expectOk(await app.request('GET', `/prop/challenges/${id}`, { token: admin }), 200);

beforeAll(async () => {
  app = await startTestApp({ label: 'prop-challenge-list' });
  admin = await adminToken(app);
  market = await setUpMarket(app, admin);
  await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
});
afterAll(() => app?.stop());

describe('the list', () => {
  test('when staff list challenges, then a page newest first, filtered by status, program, customer and login', async () => {
    const first = await program([phase()]);
    const second = await program([phase(), phase({ name: 'Verification' })]);
    const anna = await createCustomer(app, admin);
    const ben = await createCustomer(app, admin);
    const a1 = await start(first, anna);
    const a2 = await start(second, anna);
    const b1 = await start(second, ben);

    const all = await list('');
    expect(all).toMatchObject({ page: 1, page_size: 20, total: 3 });
    expect(all.items.map((c: { id: string }) => c.id)).toEqual([b1.id, a2.id, a1.id]);
    expect(all.items[0]).toEqual(b1);

    expect((await list(`?program_id=${second}`)).items.map((c: { id: string }) => c.id)).toEqual([b1.id, a2.id]);
    expect((await list(`?customer_id=${anna.id}`)).items.map((c: { id: string }) => c.id)).toEqual([a2.id, a1.id]);
    expect((await list(`?customer_id=${anna.id}&program_id=${second}`)).items.map((c: { id: string }) => c.id)).toEqual([a2.id]);
    expect((await list(`?login=${b1.login}`)).items.map((c: { id: string }) => c.id)).toEqual([b1.id]);
    expect(await list('?status=failed')).toMatchObject({ items: [], total: 0 });
    expect((await list('?status=active')).total).toBe(3);
    // Paged: the total counts every match, the page holds page_size of them.
    const paged = await list('?page=2&page_size=2');
    expect(paged).toMatchObject({ page: 2, page_size: 2, total: 3 });
    expect(paged.items.map((c: { id: string }) => c.id)).toEqual([a1.id]);
    // A filter naming nothing matches nothing.
    expect(await list('?customer_id=00000000-0000-4000-8000-000000000000')).toMatchObject({ items: [], total: 0 });
  });

  test('when the query is wrong, then 422 at the parameter', async () => {
    expect422(await app.request('GET', '/prop/challenges?status=won', { token: admin }), ['query', 'status']);
    expect422(await app.request('GET', '/prop/challenges?program_id=nope', { token: admin }), ['query', 'program_id']);
    expect422(await app.request('GET', '/prop/challenges?page_size=201', { token: admin }), ['query', 'page_size']);
  });

  test('when staff lack manage_prop, or a customer asks, then 403', async () => {
    const clerk = await createStaff(app, [], admin);
    expectError(await app.request('GET', '/prop/challenges', { token: clerk.token }), 403, 'FORBIDDEN');
    const customer = await createCustomer(app, admin);
    expectError(await app.request('GET', '/prop/challenges', { token: customer.token }), 403, 'FORBIDDEN');
  });
});

describe('one stage', () => {
  test('when a stage fails, then its detail shows the rules, the floor the breach crossed and the stages of its run', async () => {
    const id = await program([
      phase({ max_total_loss_pct: 3, max_daily_loss_pct: 50, total_loss_mode: 'static', max_trading_days: 30 }),
      phase({ name: 'Verification' }),
    ]);
    const trader = await createCustomer(app, admin);
    const started = await start(id, trader);
    const before = await detail(started.id);
    expect(before).toMatchObject({
      ...started,
      rules: {
        initial_balance: '10000.00',
        profit_target_pct: 10,
        max_daily_loss_pct: 50,
        max_total_loss_pct: 3,
        total_loss_mode: 'static',
        min_trading_days: 0,
        max_trading_days: 30,
        ends_at: expect.stringMatching(/Z$/),
      },
      limits: { daily_loss_floor: '5000.00', total_loss_floor: '9700.00', profit_target_balance: '11000.00' },
      stages: [{ id: started.id, phase: 1, status: 'active', login: started.login, created_at: started.created_at }],
    });

    await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
    expectOk(
      await app.request('POST', '/orders', {
        token: trader.token,
        body: { login: started.login, symbol: 'EURUSD', cmd: 0, volume: 1 },
      }),
      201,
    );
    await setQuote(app, admin, 'EURUSD', 1.0971, 1.0973); // equity 9690 < 9700
    const failed = await waitFor(
      'the stage to fail',
      async () => {
        const d = await detail(started.id);
        return d.status === 'failed' ? d : undefined;
      },
      15_000,
    );
    expect(failed.failure).toMatchObject({ rule: 'total_loss', threshold: failed.limits.total_loss_floor });
    expect(failed.stages).toEqual([expect.objectContaining({ id: started.id, status: 'failed' })]);
    await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
  });

  test('when a phase passes, then every stage of the run lists the same stages, phase 1 first', async () => {
    const id = await program([phase({ profit_target_pct: 5, max_daily_loss_pct: 50, max_total_loss_pct: 50 }), phase()]);
    const trader = await createCustomer(app, admin);
    const first = await start(id, trader);
    await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
    const order = expectOk(
      await app.request('POST', '/orders', {
        token: trader.token,
        body: { login: first.login, symbol: 'EURUSD', cmd: 0, volume: 1 },
      }),
      201,
    ).order as number;
    await setQuote(app, admin, 'EURUSD', 1.1102, 1.1104); // +1000
    expectOk(await app.request('POST', `/orders/${order}/close`, { token: trader.token }), 200);
    const [passed] = await waitFor('the phase to pass', async () => {
      const events = await eventsOf(app, 'prop.challenge_passed', first.id);
      return events.length ? events : undefined;
    });
    const secondId = passed!.data.next_challenge_id as string;
    const fromFirst = await detail(first.id);
    const fromSecond = await detail(secondId);
    expect(fromFirst.stages.map((s: { id: string; phase: number; status: string }) => [s.id, s.phase, s.status])).toEqual([
      [first.id, 1, 'passed'],
      [secondId, 2, 'active'],
    ]);
    expect(fromSecond.stages).toEqual(fromFirst.stages);
    await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
  });

  test('when the stage does not exist, then 404', async () => {
    expectError(
      await app.request('GET', '/prop/challenges/00000000-0000-4000-8000-000000000000', { token: admin }),
      404,
      'NOT_FOUND',
    );
  });
});
