import type { Pool } from 'pg';
import { BENCH_ADMIN as ADMIN, benchCustomer, progressOf, request, ownDatabase, eurusdGroup } from './lib/bench-kit';
import { CHILD_EXEC_ARGV, fmt, type BatchRound, type Figure, type Harness, type Server } from './lib/harness';
import { call } from './lib/load';

/**
 * What introducing brokers cost where they touch hot paths.
 *
 * 1. Closes (`POST /orders/{ticket}/close`, CONNECTIONS in flight): CLIENTS clients attributed
 *    to the bottom partner of a 5-level chain (each close accrues five rows in its own
 *    transaction, and with BENCH_IB_CHARGE=instant also pays them) against as many clients
 *    with no partner (the close statement says so in passing: the hook reads nothing). Each
 *    round opens CLOSES orders per side (untimed), then times closing them all.
 *    ratio = closes/s under the chain / closes/s without (aim: 0.7 for daily, 0.5 for instant).
 *
 * 2. The end of day's daily payment: a run of a past date (no trading account was open then,
 *    so the run is only its whole-run steps) with PARTNERS partners each owed ACCRUALS_EACH
 *    accruals (seeded by SQL) against the same run with nothing owed: what paying adds to the
 *    end of day, one wallet row per partner. ratio = payments run/s / empty run/s.
 *
 * BENCH_IB_CLIENTS (32), BENCH_IB_CLOSES (512), BENCH_IB_PARTNERS (1 000), BENCH_IB_ACCRUALS (10)
 * and BENCH_ROUNDS (3) change the sizes; an eod worker process serves the runs.
 */
const CLIENTS = positiveInteger('BENCH_IB_CLIENTS') ?? 32;
const CLOSES = positiveInteger('BENCH_IB_CLOSES') ?? 512;
const PARTNERS = positiveInteger('BENCH_IB_PARTNERS') ?? 1_000;
const ACCRUALS_EACH = positiveInteger('BENCH_IB_ACCRUALS') ?? 10;
const ROUNDS = positiveInteger('BENCH_ROUNDS') ?? 3;
const CHARGE = process.env.BENCH_IB_CHARGE === 'instant' ? 'instant' : 'daily';
const CONNECTIONS = 16;
const progress = progressOf('partners');

function positiveInteger(name: string): number | undefined {
  const n = Number(process.env[name]);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

interface Holder {
  token: string;
  login: number;
}

export async function run(h: Harness): Promise<Figure[]> {
  const own = ownDatabase('partners');
  const { tag, pool } = own;
  const env = { ...own.env, BENCH_LOG_LEVEL: 'warn' };
  const servers: Server[] = [];
  try {
    const api = await h.start({
      entry: 'servers/service.ts',
      name: 'api',
      execArgv: CHILD_EXEC_ARGV,
      env: { ...own.apiEnv, BENCH_LOG_LEVEL: 'warn' },
    });
    servers.push(api);
    servers.push(await h.startWorker('eod-worker', { ...env, WORKER_QUEUES: 'eod' }));
    const admin = (await request<{ access_token: string }>(api, 'POST', '/api/admin/users/login', '', ADMIN, 200)).access_token;
    const { referred, plain, planId } = await setUpCloses(api, admin, tag);
    const closes = await closeFigure(h, api, referred, plain);
    const payment = await paymentFigure(h, api, admin, pool, planId, tag);
    return [closes, payment];
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await own.close();
  }
}

async function setUpCloses(api: Server, admin: string, tag: string) {
  const group = {
    id: await eurusdGroup(api, admin, {
      name: `bench-partners-${tag}`,
      default_leverage: 100,
      commission_type: 'per_lot',
      commission_value: 3.5,
    }),
  };
  const plan = await request<{ id: string }>(
    api,
    'POST',
    '/api/crm/ib-plans',
    admin,
    {
      name: 'Five levels',
      currency: 'USD',
      basis: 'commission_pct',
      levels: [1, 2, 3, 4, 5].map((level) => ({ level, value: 10 })),
      charge: CHARGE,
      // The bench's orders live a moment: every close must count.
      min_hold_seconds: 0,
    },
    201,
  );
  let parent: string | undefined;
  for (let level = 5; level >= 1; level--) {
    const owner = await request<{ id: string }>(
      api,
      'POST',
      '/api/crm/customers',
      admin,
      {
        email: `bench-ib-${tag}-${level}@bench.test`,
        password: 'bench-partner-password',
        first_name: 'Ib',
        last_name: `L${level}`,
      },
      201,
    );
    const partner = await request<{ id: string }>(
      api,
      'POST',
      '/api/crm/partners',
      admin,
      { customer_id: owner.id, plan_id: plan.id, ...(parent ? { parent_partner_id: parent } : {}) },
      201,
    );
    parent = partner.id;
  }
  const holders = async (side: string, partnerId?: string): Promise<Holder[]> => {
    const out: Holder[] = [];
    for (let i = 0; i < CLIENTS; i++) {
      const c = await benchCustomer(api, admin, {
        email: `bench-ib-${side}-${tag}-${i}@bench.test`,
        lastName: `Client ${i}`,
        groupId: group.id,
      });
      if (partnerId) await request(api, 'PATCH', `/api/crm/customers/${c.customerId}`, admin, { partner_id: partnerId }, 200);
      await request(api, 'POST', `/api/backoffice/accounts/${c.liveLogin}/deposits`, admin, { amount: 1_000_000_000 }, 201);
      out.push({ token: c.token, login: c.liveLogin });
    }
    return out;
  };
  return { referred: await holders('referred', parent), plain: await holders('plain'), planId: plan.id };
}

/** Opens CLOSES orders spread over the holders (untimed), then times closing them all, CONNECTIONS at once. */
async function closeBatch(api: Server, holders: Holder[]): Promise<BatchRound> {
  const tickets: Array<{ ticket: number; token: string }> = [];
  for (let i = 0; i < CLOSES; i++) {
    const holder = holders[i % holders.length]!;
    const opened = await call(api.url('/orders'), {
      method: 'POST',
      headers: { authorization: `Bearer ${holder.token}` },
      body: { login: holder.login, symbol: 'EURUSD', cmd: i % 2, volume: 0.01 },
    });
    if (opened.status !== 201) throw new Error(`an open answered ${opened.status}: ${opened.body.slice(0, 300)}`);
    tickets.push({ ticket: (JSON.parse(opened.body) as { order: number }).order, token: holder.token });
  }
  let next = 0;
  let failures = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      for (let i = next++; i < tickets.length; i = next++) {
        const { ticket, token } = tickets[i]!;
        const closed = await call(api.url(`/orders/${ticket}/close`), {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
        });
        if (closed.status !== 200) failures++;
      }
    }),
  );
  return { ms: performance.now() - t0, failures };
}

async function closeFigure(h: Harness, api: Server, referred: Holder[], plain: Holder[]): Promise<Figure> {
  const sides: { candidate: BatchRound[]; baseline: BatchRound[] } = { candidate: [], baseline: [] };
  for (let round = 0; round <= ROUNDS; round++) {
    const c = await closeBatch(api, referred);
    const b = await closeBatch(api, plain);
    // Round 0 is unmeasured: JIT, plans and the buffer cache.
    if (round === 0) continue;
    sides.candidate.push(c);
    sides.baseline.push(b);
    progress(`closes, round ${round}/${ROUNDS}: under a 5-level chain ${fmt(c.ms)} ms, without a partner ${fmt(b.ms)} ms`);
  }
  return h.record({
    name: `${fmt(CLOSES)} closes of clients under a 5-level partner chain (${CHARGE} plan) vs of clients without a partner, ${CONNECTIONS} in flight (closes/s)`,
    unit: 'closes',
    size: CLOSES,
    connections: CONNECTIONS,
    ...sides,
    detail: { clients: CLIENTS, charge: CHARGE },
  });
}

/** PARTNERS partners, each owed ACCRUALS_EACH daily accruals of orders closed long ago (seeded by SQL, as a day's book). */
async function seedPartners(pool: Pool, planId: string, tag: string): Promise<void> {
  await pool.query(
    `with c as (
       insert into customers (id, created_at, updated_at, email, password_hash, first_name, last_name, locale)
       select gen_random_uuid(), now(), now(), 'bench-ibpay-' || $2 || '-' || g || '@bench.test', 'x', 'Ib', 'Pay ' || g, 'en'
         from generate_series(1, $1::int) g
       returning id
     ), w as (
       insert into accounts (id, created_at, updated_at, customer_id, kind, currency, balance, reserved)
       select gen_random_uuid(), now(), now(), id, 'wallet', 'USD', 0, 0 from c returning customer_id
     )
     insert into partners (id, created_at, updated_at, customer_id, plan_id, code)
     select gen_random_uuid(), now(), now(), customer_id, $3::uuid, upper(substr(md5(customer_id::text), 1, 12)) from w`,
    [PARTNERS, tag, planId],
  );
  await pool.query(
    `insert into ib_accruals (id, created_at, updated_at, ticket, partner_id, level, plan_id, client_customer_id, login, symbol,
       lots, amount, currency, status, charge, closed_at)
     select gen_random_uuid(), now(), now(), 900000000 + row_number() over (), p.id, 1, p.plan_id, p.customer_id, 1, 'EURUSD',
            0.10, 0.35, 'USD', 'accrued', 'daily', timestamptz '2025-01-01T12:00:00Z'
       from partners p join customers c on c.id = p.customer_id cross join generate_series(1, $1::int) g
      where c.email like 'bench-ibpay-' || $2 || '-%'`,
    [ACCRUALS_EACH, tag],
  );
}

/** Mondays to Fridays from 2025-01-06: a fresh trading date per run. */
function* tradingDates(): Generator<string> {
  for (let t = Date.parse('2025-01-06T00:00:00Z'); ; t += 86_400_000) {
    const day = new Date(t).getUTCDay();
    if (day >= 1 && day <= 5) yield new Date(t).toISOString().slice(0, 10);
  }
}

async function eodRun(api: Server, admin: string, pool: Pool, tradingDate: string): Promise<BatchRound> {
  const t0 = performance.now();
  const started = await request<{ id: string }>(
    api,
    'POST',
    '/api/backoffice/eod/runs',
    admin,
    { trading_date: tradingDate },
    202,
  );
  for (;;) {
    const { rows } = await pool.query<{ status: string }>('select status from eod_runs where id = $1', [started.id]);
    // The run completes first, then pays: it is done once no accrual it owes is left unpaid.
    if (rows[0]!.status === 'failed') return { ms: performance.now() - t0, failures: 1 };
    if (rows[0]!.status === 'completed') {
      const { rows: left } = await pool.query<{ n: number }>(
        `select count(*)::int as n from ib_accruals where status = 'accrued' and charge = 'daily'`,
      );
      if (left[0]!.n === 0) {
        const { rows: paid } = await pool.query<{ n: number }>(
          'select count(*)::int as n from ib_payments where trading_date = $1',
          [tradingDate],
        );
        return { ms: performance.now() - t0, detail: { payments: paid[0]!.n } };
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function paymentFigure(h: Harness, api: Server, admin: string, pool: Pool, planId: string, tag: string): Promise<Figure> {
  // The close figure's own accruals are left out of this figure: marked paid, as a run would.
  await pool.query(`update ib_accruals set status = 'paid' where status = 'accrued'`);
  await seedPartners(pool, planId, tag);
  const dates = tradingDates();
  const sides: { candidate: BatchRound[]; baseline: BatchRound[] } = { candidate: [], baseline: [] };
  for (let round = 0; round <= ROUNDS; round++) {
    // Owed again: each round pays every partner once, for a date of its own.
    await pool.query(`update ib_accruals set status = 'accrued', payment_id = null, paid_at = null where ticket >= 900000000`);
    const c = await eodRun(api, admin, pool, dates.next().value!);
    const b = await eodRun(api, admin, pool, dates.next().value!);
    if (round === 0) continue;
    sides.candidate.push(c);
    sides.baseline.push(b);
    progress(
      `payment, round ${round}/${ROUNDS}: ${fmt(PARTNERS)} partners paid in ${fmt(c.ms)} ms, nothing owed ${fmt(b.ms)} ms`,
    );
  }
  return h.record({
    name: `end of day paying ${fmt(PARTNERS)} partners ${fmt(ACCRUALS_EACH)} accruals each vs the same run owing nothing (runs/s)`,
    unit: 'runs',
    size: 1,
    connections: 1,
    ...sides,
    detail: { partners: PARTNERS, accruals_each: ACCRUALS_EACH },
  });
}
