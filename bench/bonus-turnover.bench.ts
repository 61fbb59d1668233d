import { CHILD_EXEC_ARGV, fmt, type Figure, type Harness, type RunWindow, type Server } from './lib/harness';
import { BENCH_ADMIN as ADMIN, benchCustomer, measureLoop, progressOf, request, ownDatabase, eurusdGroup } from './lib/bench-kit';
import { call } from './lib/load';

/**
 * What an active bonus costs a close: POST /orders/{ticket}/close on accounts holding an active
 * bonus (granted through a promo code redeem, so the redeem path runs in the set-up) against
 * the same close on accounts holding none, 16 in flight. With a bonus the close's transaction
 * also counts turnover: it reads the account's active bonuses and the closed order's hedged
 * volume, records the order's turnover row, advances the bonus and writes `bonus.progress`
 * (the programme counts every close: min_hold_seconds 0; the target is never reached, so
 * nothing is released and both sides do the same every time). Without credit the hook returns
 * before any statement.
 *
 * Closing needs open orders: before each slice, each side tops its queue of open tickets up to
 * twice what its largest slice closed so far (opened through the API, not measured). A slice
 * that runs out of tickets stops early and says so.
 */
const progress = progressOf('bonus-turnover');
const CUSTOMERS = 16;
const CONNECTIONS = 16;
const FIRST_FILL = 400;

interface Side {
  name: string;
  logins: number[];
  tickets: number[];
  largest: number;
}

export async function run(h: Harness): Promise<Figure[]> {
  const own = ownDatabase('bonus');
  const { tag, pool } = own;
  let api: Server | undefined;
  try {
    api = await h.start({ entry: 'servers/service.ts', name: 'api', execArgv: CHILD_EXEC_ARGV, env: own.apiEnv });
    const server = api;
    const { admin, bonus, plain } = await setUp(server, tag);
    let seq = 0;
    const open = async (side: Side, n: number) => {
      const workers = Array.from({ length: CONNECTIONS }, async () => {
        while (side.tickets.length < n) {
          const login = side.logins[seq++ % side.logins.length]!;
          const placed = await request<{ order: number }>(
            server,
            'POST',
            '/orders',
            admin,
            { login, symbol: 'EURUSD', cmd: seq % 2, volume: 0.01 },
            201,
          );
          side.tickets.push(placed.order);
        }
      });
      await Promise.all(workers);
    };
    const closeLoop = async (side: Side, window: RunWindow) => {
      await open(side, Math.max(FIRST_FILL, side.largest * 2));
      let closed = 0;
      const result = await measureLoop(
        window,
        async () => {
          const ticket = side.tickets.pop();
          if (ticket === undefined) throw new Error(`${side.name}: out of open tickets`);
          const reply = await call(server.url(`/orders/${ticket}/close`), {
            method: 'POST',
            headers: { authorization: `Bearer ${admin}` },
          });
          if (reply.status !== 200) throw new Error(`a close answered ${reply.status}: ${reply.body.slice(0, 200)}`);
          closed++;
        },
        progress,
      );
      side.largest = Math.max(side.largest, closed);
      return result;
    };
    const figure = await h.compareRuns({
      name: `POST /orders/{ticket}/close on accounts with an active bonus vs without, ${CONNECTIONS} in flight`,
      connections: CONNECTIONS,
      candidate: (window) => closeLoop(bonus, window),
      baseline: (window) => closeLoop(plain, window),
    });
    const [counted] = (await pool.query<{ n: number }>('select count(*)::int as n from bonus_turnover')).rows;
    progress(
      `${counted?.n ?? 0} closes counted toward bonuses; p99 of a close: ${fmt(figure.candidateP99Ms, 1)} ms with a bonus, ` +
        `${fmt(figure.baselineP99Ms, 1)} ms without`,
    );
    return [figure];
  } finally {
    await api?.stop();
    await own.close();
  }
}

async function setUp(api: Server, tag: string): Promise<{ admin: string; bonus: Side; plain: Side }> {
  const admin = (await request<{ access_token: string }>(api, 'POST', '/api/admin/users/login', '', ADMIN, 200)).access_token;
  const group = { id: await eurusdGroup(api, admin, { name: `bench-bonus-${tag}`, default_leverage: 100 }) };
  const program = await request<{ id: string }>(
    api,
    'POST',
    '/api/crm/bonus-programs',
    admin,
    {
      name: `bench-bonus-${tag}`,
      currency: 'USD',
      kind: 'fixed',
      amount: 1_000_000,
      group_ids: [group.id],
      trigger: 'promo_code',
      first_deposit_only: false,
      min_hold_seconds: 0,
      release: { mode: 'on_target', lots_per_unit: 1 },
    },
    201,
  );
  const code = await request<{ code: string }>(
    api,
    'POST',
    '/api/crm/promo-codes',
    admin,
    { reward: { type: 'bonus', bonus_program_id: program.id } },
    201,
  );
  const sideOf = async (name: string, redeem: boolean): Promise<Side> => {
    const logins: number[] = [];
    for (let i = 0; i < CUSTOMERS; i++) {
      const { liveLogin, token } = await benchCustomer(api, admin, {
        email: `bench-bonus-${name}-${tag}-${i}@bench.test`,
        lastName: `Trader ${i}`,
        groupId: group.id,
      });
      await request(api, 'POST', `/api/backoffice/accounts/${liveLogin}/deposits`, admin, { amount: 1_000_000_000 }, 201);
      if (redeem)
        await request(api, 'POST', '/customers/me/promo-codes/redeem', token, { code: code.code, login: liveLogin }, 201);
      logins.push(liveLogin);
    }
    return { name, logins, tickets: [], largest: 0 };
  };
  const bonus = await sideOf('with', true);
  const plain = await sideOf('without', false);
  progress(`${CUSTOMERS} accounts holding a 1,000,000 bonus (redeemed by promo code), ${CUSTOMERS} holding none`);
  return { admin, bonus, plain };
}
