import { eventInsertSql } from '../src/domain/events/outbox';
import type { Pool } from 'pg';
import { CHILD_EXEC_ARGV, fmt, type Figure, type Harness, type RunWindow, type Server } from './lib/harness';
import { BENCH_ADMIN as ADMIN, measureLoop, ownDatabase, progressOf, request } from './lib/bench-kit';
import { measure, type LoadResult } from './lib/load';

/**
 * What data scope costs the CRM's reads, in three figures:
 *
 * 1. A scoped customer list: `GET /api/crm/customers` (a page of 20 and its total) as a
 *    `team`-scope agent of a team holding 1,000 of 100,000 customers, against the same page and
 *    count unscoped, sent straight to Postgres through `pg` from this process (what an unlimited
 *    caller's list costs the database, without the service around it).
 * 2. The timeline of a customer with 10,000 events: `GET /api/crm/customers/{id}/timeline`
 *    (50 items merged from events, notes, tasks, messages and audit entries) against the newest
 *    50 of its events read through `pg` alone.
 * 3. The same timeline against the same customer's card (`GET /api/crm/customers/{id}`), both
 *    through the service: the HTTP tier, authentication and the scope check are on both sides,
 *    so the ratio is what the merge of five sources costs.
 *
 * The customers and events are written by SQL before the run (the API would take minutes for
 * 100,000 customers); the agent, its role, its team and the team's manager assignment go
 * through the API, as staff would make them. 16 requests in flight on each side.
 */

/** $2 `customer.assigned` events of customer $1, a minute apart, through the outbox's own insert. */
const SEED_EVENTS = eventInsertSql({
  type: 'customer.assigned',
  aggregateType: 'customer',
  aggregateId: '$1::text',
  customerId: '$1::uuid',
  data: `json_build_object('id', $1::text, 'n', i)`,
  at: `now() - i * interval '1 minute'`,
  from: 'generate_series(1, $2::int) i',
});

const progress = progressOf('crm');
const CUSTOMERS = 100_000;
const TEAM_CUSTOMERS = 1_000;
const EVENTS = 10_000;
const CONNECTIONS = 16;

export async function run(h: Harness): Promise<Figure[]> {
  const own = ownDatabase('crm', CONNECTIONS);
  let api: Server | undefined;
  try {
    api = await h.start({ entry: 'servers/service.ts', name: 'api', execArgv: CHILD_EXEC_ARGV, env: own.apiEnv });
    const { agent, customerId } = await setUp(api, own.pool, own.tag);

    const list = await h.compareRuns({
      name: `GET /api/crm/customers as a team agent (${TEAM_CUSTOMERS} of ${CUSTOMERS} customers) vs the unscoped page and count via pg`,
      connections: CONNECTIONS,
      candidate: (window) => measure({ url: api!.url('/api/crm/customers?page_size=20'), headers: bearer(agent), ...window }),
      baseline: (window) => unscopedPages(own.pool, window),
    });
    const timeline = await h.compareRuns({
      name: `GET /api/crm/customers/{id}/timeline of a customer with ${EVENTS} events vs its newest 50 events via pg`,
      connections: CONNECTIONS,
      candidate: (window) =>
        measure({ url: api!.url(`/api/crm/customers/${customerId}/timeline?limit=50`), headers: bearer(agent), ...window }),
      baseline: (window) => newestEvents(own.pool, customerId, window),
    });
    // The same request through the same HTTP tier, authentication and scope check, but one
    // indexed read: what the timeline's five-source merge costs beyond any staff read.
    const againstCard = await h.compareRuns({
      name: `GET /api/crm/customers/{id}/timeline of a customer with ${EVENTS} events vs the same customer's card`,
      connections: CONNECTIONS,
      candidate: (window) =>
        measure({ url: api!.url(`/api/crm/customers/${customerId}/timeline?limit=50`), headers: bearer(agent), ...window }),
      baseline: (window) => measure({ url: api!.url(`/api/crm/customers/${customerId}`), headers: bearer(agent), ...window }),
    });
    progress(
      `p99: the scoped list ${fmt(list.candidateP99Ms, 1)} ms (unscoped via pg ${fmt(list.baselineP99Ms, 1)} ms), ` +
        `the timeline ${fmt(timeline.candidateP99Ms, 1)} ms (events via pg ${fmt(timeline.baselineP99Ms, 1)} ms)`,
    );
    return [list, timeline, againstCard];
  } finally {
    await api?.stop();
    await own.close();
  }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The agent (team scope, member of East) and the customer whose timeline is read. */
async function setUp(api: Server, pool: Pool, tag: string): Promise<{ agent: string; customerId: string }> {
  const admin = (await request<{ access_token: string }>(api, 'POST', '/api/admin/users/login', '', ADMIN, 200)).access_token;
  const east = await request<{ id: string }>(api, 'POST', '/api/admin/teams', admin, { name: `East ${tag}` }, 201);
  const west = await request<{ id: string }>(api, 'POST', '/api/admin/teams', admin, { name: `West ${tag}` }, 201);
  const role = await request<{ id: string }>(
    api,
    'POST',
    '/api/admin/roles',
    admin,
    { name: `crm-agent-${tag}`, permissions: ['view_customers'] },
    201,
  );
  const email = `crm-agent-${tag}@bench.test`;
  const password = 'bench-agent-key-4471';
  const user = await request<{ id: string }>(
    api,
    'POST',
    '/api/admin/users',
    admin,
    { email, password, full_name: 'CRM agent', role_ids: [role.id] },
    201,
  );
  await request(api, 'PATCH', `/api/admin/users/${user.id}`, admin, { data_scope: 'team' }, 200);
  await request(api, 'PUT', `/api/admin/teams/${east.id}/members/${user.id}`, admin, { role: 'member' }, 200);
  const agent = (await request<{ access_token: string }>(api, 'POST', '/api/admin/users/login', '', { email, password }, 200))
    .access_token;

  progress(`writing ${CUSTOMERS} customers (${TEAM_CUSTOMERS} in the agent's team) and ${EVENTS} events of one of them`);
  // A password hash no password matches: these customers are read, never signed in.
  await pool.query(
    `insert into customers (id, created_at, updated_at, password_hash, email, first_name, last_name, team_id)
     select gen_random_uuid(), now() - i * interval '1 second', now(), 'bench-no-login',
            'crm-' || $1::text || '-' || i || '@bench.test', 'Customer', 'No ' || i,
            case when i <= $2 then $3::uuid else $4::uuid end
       from generate_series(1, $5::int) i`,
    [tag, TEAM_CUSTOMERS, east.id, west.id, CUSTOMERS],
  );
  const [first] = (
    await pool.query<{ id: string }>(`select id from customers where team_id = $1 order by created_at desc limit 1`, [east.id])
  ).rows;
  await pool.query(SEED_EVENTS, [first!.id, EVENTS]);
  // Published already, as the relay would leave them, so it passes them by.
  await pool.query('update domain_events set published_at = now() where customer_id = $1 and published_at is null', [first!.id]);
  await pool.query('analyze customers; analyze domain_events');
  const page = await request<{ total: number }>(api, 'GET', '/api/crm/customers?page_size=20', agent, undefined, 200);
  if (page.total !== TEAM_CUSTOMERS) throw new Error(`the agent's list counts ${page.total}, not ${TEAM_CUSTOMERS}`);
  return { agent, customerId: first!.id };
}

/** A page of 20 customers, newest first, and the count of all, as an unlimited caller's list asks Postgres. */
function unscopedPages(pool: Pool, window: RunWindow): Promise<LoadResult> {
  return measureLoop(
    window,
    async () => {
      await pool.query('select * from customers order by created_at desc, id desc limit 20');
      await pool.query('select count(*)::int as total from customers');
    },
    progress,
  );
}

/** The newest 50 events of one customer, the largest source of its timeline. */
function newestEvents(pool: Pool, customerId: string, window: RunWindow): Promise<LoadResult> {
  return measureLoop(
    window,
    () =>
      pool.query(
        `select created_at, type, id from domain_events where customer_id = $1 and created_at < now()
          order by created_at desc limit 50`,
        [customerId],
      ),
    progress,
  );
}
