import { CHILD_EXEC_ARGV, fmt, type BatchRound, type Figure, type Harness, type RunWindow, type Server } from './lib/harness';
import { BENCH_ADMIN as ADMIN, benchCustomer, measureLoop, progressOf, request, ownDatabase, eurusdGroup } from './lib/bench-kit';
import { call } from './lib/load';

/**
 * What an active bonus costs a close: POST /orders/{ticket}/close on accounts holding an active
 * bonus (granted through a promo code redeem, so the redeem path runs in the set-up) against
 * the same close on accounts holding none, 16 in flight. With a bonus the close's statement
 * also counts turnover: it reads the account's active bonuses and the closed order's hedged
 * volume, records the order's turnover row, advances the bonus and writes `bonus.progress`
 * (the programme counts every close: min_hold_seconds 0; the target is never reached, so
 * nothing is released and both sides do the same every time). Without credit the close's
 * statement leaves that part out.
 *
 * Closing needs open orders: before each slice, each side tops its queue of open tickets up to
 * twice what its largest slice closed so far (opened through the API, not measured). A slice
 * that runs out of tickets stops early and says so.
 *
 * Then a promo code storm: STORM customers (BENCH_PROMO_STORM, default 10) redeem, all at once,
 * a code with one use left; exactly one may answer 201, the others 409 PROMO_CODE_EXHAUSTED
 * (the bench fails otherwise). Its time is set against the same customers each redeeming, all
 * at once, a code of its own with one use left (no contention). Redeems per customer are capped
 * at 10 an hour, so at most 4 rounds run (BENCH_ROUNDS, default 3).
 */
const progress = progressOf('bonus-turnover');
const CUSTOMERS = 16;
const CONNECTIONS = 16;
const FIRST_FILL = 400;
const STORM = Number(process.env['BENCH_PROMO_STORM'] ?? '') || 10;
const STORM_ROUNDS = Math.min(Number(process.env['BENCH_ROUNDS'] ?? '') || 3, 4);

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
    const { admin, bonus, plain, group, program } = await setUp(server, tag);
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
    const storm = await promoStorm(h, server, admin, group, program, tag);
    return [figure, storm];
  } finally {
    await api?.stop();
    await own.close();
  }
}

async function setUp(
  api: Server,
  tag: string,
): Promise<{ admin: string; bonus: Side; plain: Side; group: string; program: string }> {
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
  return { admin, bonus, plain, group: group.id, program: program.id };
}

/** Parallel redeems of one code's last use (exactly one 201) against as many redeems of codes of their own. */
async function promoStorm(h: Harness, api: Server, admin: string, group: string, program: string, tag: string): Promise<Figure> {
  const customers: Array<{ token: string; login: number }> = [];
  for (let i = 0; i < STORM; i++) {
    const { liveLogin, token } = await benchCustomer(api, admin, {
      email: `bench-bonus-storm-${tag}-${i}@bench.test`,
      lastName: `Storm ${i}`,
      groupId: group,
    });
    customers.push({ token, login: liveLogin });
  }
  const lastUse = () =>
    request<{ code: string }>(
      api,
      'POST',
      '/api/crm/promo-codes',
      admin,
      { reward: { type: 'bonus', bonus_program_id: program }, max_redemptions: 1 },
      201,
    ).then((c) => c.code);
  const redeemAll = async (codes: string[]): Promise<{ ms: number; statuses: number[] }> => {
    const t0 = performance.now();
    const replies = await Promise.all(
      customers.map((c, i) =>
        call(api.url('/customers/me/promo-codes/redeem'), {
          method: 'POST',
          headers: { authorization: `Bearer ${c.token}` },
          body: { code: codes[i % codes.length], login: c.login },
        }).then((r) => {
          if (r.status !== 201 && !(r.status === 409 && r.body.includes('PROMO_CODE_EXHAUSTED')))
            throw new Error(`a redeem answered ${r.status}: ${r.body.slice(0, 200)}`);
          return r.status;
        }),
      ),
    );
    return { ms: performance.now() - t0, statuses: replies };
  };
  const sides: { candidate: BatchRound[]; baseline: BatchRound[] } = { candidate: [], baseline: [] };
  for (let round = 1; round <= STORM_ROUNDS; round++) {
    const one = await redeemAll([await lastUse()]);
    const won = one.statuses.filter((s) => s === 201).length;
    if (won !== 1) throw new Error(`${STORM} parallel redeems of a code's last use gave ${won} 201s, not 1`);
    const own = await redeemAll(await Promise.all(customers.map(() => lastUse())));
    const each = own.statuses.filter((s) => s === 201).length;
    if (each !== STORM) throw new Error(`${STORM} parallel redeems of codes of their own gave ${each} 201s`);
    sides.candidate.push({ ms: one.ms, failures: 0 });
    sides.baseline.push({ ms: own.ms, failures: 0 });
    progress(`storm ${round}/${STORM_ROUNDS}: one code ${fmt(one.ms)} ms (one 201), a code each ${fmt(own.ms)} ms`);
  }
  return h.record({
    name: `${STORM} parallel promo redeems of one code's last use (one 201) vs of a code each (redeems/s)`,
    unit: 'redeems',
    size: STORM,
    connections: STORM,
    ...sides,
  });
}
