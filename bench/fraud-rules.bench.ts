import { CHILD_EXEC_ARGV, fmt, type Figure, type Harness, type Server } from './lib/harness';
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
 */
const progress = progressOf('fraud-rules');
const CUSTOMERS = 16;
const CONNECTIONS = 16;
const RULES = 100;

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
  token: string;
  iban: string;
}

export async function run(h: Harness): Promise<Figure[]> {
  const own = ownDatabase('fraud');
  const { tag, pool } = own;
  let api: Server | undefined;
  try {
    api = await h.start({ entry: 'servers/service.ts', name: 'api', execArgv: CHILD_EXEC_ARGV, env: own.apiEnv });
    const holders = await setUp(api, tag);
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
    return [figure];
  } finally {
    await api?.stop();
    await own.close();
  }
}

async function setUp(api: Server, tag: string): Promise<Holder[]> {
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
    holders.push({ token, iban: `DE00BENCH${tag}${String(i).padStart(4, '0')}` });
  }
  progress(`${CUSTOMERS} customers, each with a funded wallet`);
  return holders;
}
