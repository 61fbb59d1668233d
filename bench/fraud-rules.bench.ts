import type { Pool } from 'pg';
import { evaluationInsertSql } from '../src/domain/fraud/fraud.queries';
import { FraudPreviewSchema, previewStatement } from '../src/domain/fraud/preview';
import { pgPlaceholders } from '../src/platform/named-sql';
import { CHILD_EXEC_ARGV, fmt, type BatchRound, type Figure, type Harness, type Server } from './lib/harness';
import { BENCH_ADMIN as ADMIN, benchCustomer, progressOf, request, ownDatabase } from './lib/bench-kit';
import { call, measure, nextSeq } from './lib/load';

/**
 * What the fraud rules cost a withdrawal: POST /customers/me/withdraw with 100 enabled
 * withdrawal rules against the same route with none enabled, 16 in flight. The rules never
 * match (each compares one field with a value no request has), so both sides end the same way
 * (a pending withdrawal, `allow`); the candidate reads every field the rules name (10 distinct
 * ones, some from the customer row, some counted over deposits, trades and signals) and
 * stores them with its evaluation. Both sides read the rules from the process's copy, checked
 * against the stamp (one index read); the switch between sides writes a new stamp, so the first
 * request of a slice reloads them.
 *
 * CUSTOMERS customers each hold a wallet funded far beyond the run; request n is customer
 * n mod CUSTOMERS, 1.00 to a destination of its own.
 *
 * Then the rule preview (POST /api/backoffice/fraud/rules/preview) over EVALUATIONS stored
 * withdrawal evaluations (BENCH_FRAUD_EVALUATIONS, default 1,000,000; written set-based through
 * the fraud module's insert, spread over 29 days, a tenth of them without the aggregate the
 * rule reads): the time of the HTTP answer against the same aggregate statement run straight
 * on Postgres through `pg`, in evaluations/s (BENCH_ROUNDS rounds, default 3, after one of each
 * unmeasured).
 */
const progress = progressOf('fraud-rules');
const CUSTOMERS = 16;
const CONNECTIONS = 16;
const RULES = 100;
const EVALUATIONS = Number(process.env['BENCH_FRAUD_EVALUATIONS'] ?? '') || 1_000_000;
const PREVIEW_ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? '') || 3;

/** The fields the rules read, taken in turn: cheap ones from the request and the customer row, and counted ones. */
const FIELDS: Array<{ field: string; op: string; value: unknown }> = [
  { field: 'amount_usd', op: 'gt', value: 1e15 },
  { field: 'customer.country', op: 'eq', value: 'ZZ' },
  { field: 'device.id', op: 'eq', value: 'never-this-device' },
  { field: 'ip.address', op: 'eq', value: '192.0.2.254' },
  { field: 'kyc.level', op: 'gt', value: 99 },
  { field: 'customer.age_hours', op: 'gt', value: 1e9 },
  { field: 'customer.lifecycle', op: 'eq', value: 'never' },
  { field: 'deposits_24h', op: 'gt', value: 1e9 },
  { field: 'withdrawal.destination_customers', op: 'gt', value: 1e9 },
  { field: 'trades_since_last_deposit', op: 'lt', value: -1 },
];

interface Holder {
  customerId: string;
  token: string;
  iban: string;
}

export async function run(h: Harness): Promise<Figure[]> {
  const own = ownDatabase('fraud');
  const { tag, pool } = own;
  let api: Server | undefined;
  try {
    api = await h.start({ entry: 'servers/service.ts', name: 'api', execArgv: CHILD_EXEC_ARGV, env: own.apiEnv });
    const { admin, holders } = await setUp(api, tag);
    // The rules are written straight into the table (the API caps them at 100 in all, built-ins
    // included), disabled, and each side enables or disables them with a new stamp.
    await pool.query(
      `insert into fraud_rules (id, created_at, updated_at, name, event, match, conditions, action, position, enabled, version)
       select gen_random_uuid(), now(), now(), 'bench rule ' || i, 'withdrawal', 'all', $1::jsonb -> ((i - 1) % $2), 'review', i, false, 1
         from generate_series(1, $3) i`,
      [JSON.stringify(FIELDS.map((f) => [f])), FIELDS.length, RULES],
    );
    const rulesOn = (on: boolean) =>
      pool.query(
        `with r as (update fraud_rules set enabled = $1 where name like 'bench rule %' returning 1)
         update fraud_rules_stamp set stamp = gen_random_uuid(), changed_at = now() where id = 1`,
        [on],
      );
    const url = api.url('/customers/me/withdraw');
    const target = {
      url,
      method: 'POST',
      headers: (seq: number) => ({ authorization: `Bearer ${holders[seq % CUSTOMERS]!.token}` }),
      body: (seq: number) => ({ amount: 1, payment_data: { iban: holders[seq % CUSTOMERS]!.iban } }),
    };
    for (const on of [true, false]) {
      await rulesOn(on);
      const seq = nextSeq();
      const check = await call(url, { method: 'POST', headers: target.headers(seq), body: target.body(seq) });
      if (check.status !== 202) throw new Error(`a withdrawal answered ${check.status}: ${check.body.slice(0, 300)}`);
    }
    const [stored] = (
      await pool.query<{ n: number }>(
        `select (select count(*) from jsonb_object_keys(fields))::int as n
           from fraud_evaluations where event = 'withdrawal' order by created_at desc offset 1 limit 1`,
      )
    ).rows;
    progress(`an evaluation with the rules on stored ${stored?.n ?? 0} field values`);

    const figure = await h.compareRuns({
      name: `POST /customers/me/withdraw with ${RULES} enabled withdrawal rules vs none, ${CONNECTIONS} in flight`,
      connections: CONNECTIONS,
      candidate: async (window) => {
        await rulesOn(true);
        return measure({ ...target, ...window });
      },
      baseline: async (window) => {
        await rulesOn(false);
        return measure({ ...target, ...window });
      },
    });
    progress(
      `p99 of a withdrawal under this load: ${fmt(figure.candidateP99Ms, 1)} ms with the rules, ` +
        `${fmt(figure.baselineP99Ms, 1)} ms without`,
    );
    const preview = await previewFigure(h, api, admin, pool, holders);
    return [figure, preview];
  } finally {
    await api?.stop();
    await own.close();
  }
}

async function setUp(api: Server, tag: string): Promise<{ admin: string; holders: Holder[] }> {
  const admin = (await request<{ access_token: string }>(api, 'POST', '/api/admin/users/login', '', ADMIN, 200)).access_token;
  const group = await request<{ id: string }>(api, 'POST', '/groups', admin, { name: `bench-fraud-${tag}` }, 201);
  const holders: Holder[] = [];
  for (let i = 0; i < CUSTOMERS; i++) {
    const { customerId, token } = await benchCustomer(api, admin, {
      email: `bench-fraud-${tag}-${i}@bench.test`,
      lastName: `Customer ${i}`,
      groupId: group.id,
    });
    const wallet = await request<{ items: Array<{ login: number; kind: string }> }>(
      api,
      'GET',
      `/api/crm/customers/${customerId}/accounts`,
      admin,
      undefined,
      200,
    );
    const login = wallet.items.find((a) => a.kind === 'wallet')!.login;
    await request(api, 'POST', `/api/backoffice/accounts/${login}/deposits`, admin, { amount: 1_000_000_000 }, 201);
    holders.push({ customerId, token, iban: `DE00BENCH${tag}${String(i).padStart(4, '0')}` });
  }
  progress(`${CUSTOMERS} customers, each with a funded wallet`);
  return { admin, holders };
}

/** The rule previewed: it reads one counted field (an aggregate at evaluation time) and one from the customer row. */
const PREVIEW_BODY = {
  rule: {
    name: 'bench preview',
    event: 'withdrawal',
    match: 'any',
    conditions: [
      { field: 'deposits_24h', op: 'gt', value: 4 },
      { field: 'customer.country', op: 'eq', value: 'CY' },
    ],
    action: 'review',
    position: 0,
    enabled: true,
  },
  days: 30,
};

async function previewFigure(h: Harness, api: Server, admin: string, pool: Pool, holders: Holder[]): Promise<Figure> {
  const t0 = performance.now();
  await seedEvaluations(
    pool,
    holders.map((x) => x.customerId),
    EVALUATIONS,
  );
  progress(`stored ${fmt(EVALUATIONS)} withdrawal evaluations in ${fmt((performance.now() - t0) / 1000, 1)} s`);
  const statement = previewStatement(FraudPreviewSchema.parse(PREVIEW_BODY));
  const answer = async (): Promise<BatchRound> => {
    const began = performance.now();
    const reply = await call(api.url('/api/backoffice/fraud/rules/preview'), {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}` },
      body: PREVIEW_BODY,
    });
    const ms = performance.now() - began;
    if (reply.status !== 200) throw new Error(`the preview answered ${reply.status}: ${reply.body.slice(0, 300)}`);
    return { ms, failures: 0, detail: JSON.parse(reply.body) as Record<string, unknown> };
  };
  const aggregate = async (): Promise<BatchRound> => {
    const began = performance.now();
    const { rows } = await pool.query(pgPlaceholders(statement.sql), statement.values);
    return { ms: performance.now() - began, failures: 0, detail: rows[0] as Record<string, unknown> };
  };
  await answer();
  await aggregate();
  const sides: { candidate: BatchRound[]; baseline: BatchRound[] } = { candidate: [], baseline: [] };
  for (let round = 1; round <= PREVIEW_ROUNDS; round++) {
    const c = await answer();
    const b = await aggregate();
    sides.candidate.push(c);
    sides.baseline.push(b);
    const d = c.detail as { evaluations: number; would_review: number; missing_fields: number };
    progress(
      `preview round ${round}/${PREVIEW_ROUNDS}: answer ${fmt(c.ms)} ms (${d.evaluations} evaluations, ${d.would_review} ` +
        `would review, ${d.missing_fields} missing a field), aggregate ${fmt(b.ms)} ms`,
    );
  }
  return h.record({
    name: `fraud rule preview over ${fmt(EVALUATIONS)} stored evaluations, HTTP answer vs the same aggregate via pg (evaluations/s)`,
    unit: 'evaluations',
    size: EVALUATIONS,
    connections: 1,
    ...sides,
  });
}

/** `n` allowed withdrawal evaluations of the customers, set-based, in chunks (deterministic from their number). */
async function seedEvaluations(pool: Pool, customers: string[], n: number): Promise<void> {
  const chunk = 250_000;
  for (let from = 0; from < n; from += chunk) {
    await pool.query(
      evaluationInsertSql(`
        select gen_random_uuid(), now() - make_interval(secs => (i * 6151 % (29 * 86400))), 'withdrawal',
               ($1::uuid[])[1 + i % cardinality($1::uuid[])], 'allow', 'default', null::uuid, null::int,
               jsonb_build_object('customerId', ($1::uuid[])[1 + i % cardinality($1::uuid[])], 'amount', '1.00',
                                  'currency', 'USD', 'ip', '198.51.100.' || (i % 250), 'deviceId', 'bench-device-' || (i % 1000)),
               case when i % 10 = 0 then jsonb_build_object('customer.country', 'DE')
                    else jsonb_build_object('deposits_24h', i % 7, 'customer.country', case when i % 13 = 0 then 'CY' else 'DE' end) end,
               null::text, null::text
          from generate_series($2::bigint + 1, $2::bigint + $3::int) as i`),
      [customers, from, Math.min(chunk, n - from)],
    );
  }
  await pool.query('analyze fraud_evaluations');
}
