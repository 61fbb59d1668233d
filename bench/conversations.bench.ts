import { randomBytes, randomUUID } from 'node:crypto';
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import type { Pool } from 'pg';
import { AccessTokens } from '../src/domain/identity/access-tokens';
import { BENCH_ADMIN, measureLoop, ownDatabase, progressOf, request } from './lib/bench-kit';
import { CHILD_EXEC_ARGV, fmt, type Figure, type Harness, type Server } from './lib/harness';
import { call } from './lib/load';
import { benchConfig } from './servers/bench-config';

/**
 * Support conversations under live streams. Staff replies go through
 * `POST /api/crm/conversations/{id}/messages`, 16 in flight, each to the next of STREAMS
 * customers whose `/customers/me/stream` is open (the candidate), against the same replies to
 * as many customers with no stream open (the baseline), on the same service with the same
 * streams connected. The ratio is what delivering each reply to a live stream costs the posting
 * rate; beside it, the delay from a reply's answer to its arrival on the customer's stream (p50,
 * p99: the outbox relay, every OUTBOX_RELAY_INTERVAL_MS, then the stream hub).
 *
 * Customers and their sessions are written by SQL and their access tokens signed here (logging
 * 4,000 customers in would spend minutes hashing passwords); each conversation is opened by
 * staff through the API. BENCH_STREAMS (default 2000) sizes it down for a quick run.
 */
const progress = progressOf('conversations');
const STREAMS = Number(process.env.BENCH_STREAMS ?? 2000);
const CONNECTIONS = 16;
const RELAY_INTERVAL_MS = '100';

interface Customer {
  id: string;
  sid: string;
  token: string;
  conversation: string;
}

export async function run(h: Harness): Promise<Figure[]> {
  const own = ownDatabase('conversations', 8);
  const jwtSecret = randomBytes(36).toString('base64url');
  const env = { ...own.env, BENCH_JWT_SECRET: jwtSecret, OUTBOX_RELAY_INTERVAL_MS: RELAY_INTERVAL_MS };
  const sockets: IncomingMessage[] = [];
  try {
    const api = await h.start({
      entry: 'servers/service.ts',
      name: 'api',
      execArgv: CHILD_EXEC_ARGV,
      env: { ...own.apiEnv, ...env },
      startTimeoutMs: 120_000,
    });
    await h.startWorker('worker', { ...env, WORKER_QUEUES: 'events' });
    const admin = (await request<{ access_token: string }>(api, 'POST', '/api/admin/users/login', '', BENCH_ADMIN, 200))
      .access_token;
    const streaming = await customers(api, own.pool, admin, jwtSecret, STREAMS);
    const quiet = await customers(api, own.pool, admin, jwtSecret, STREAMS);
    const arrivals = new Map<string, number>();
    progress(`opening ${STREAMS} customer streams`);
    for (let i = 0; i < streaming.length; i += 100)
      sockets.push(...(await Promise.all(streaming.slice(i, i + 100).map((c) => openStream(api, c.token, arrivals)))));

    const answered = new Map<string, number>();
    let n = 0;
    const reply = (who: Customer[], tag: string) => async () => {
      const i = n++;
      const mark = `${tag}-${i}`;
      const res = await call(api.url(`/api/crm/conversations/${who[i % who.length]!.conversation}/messages`), {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ body: `Thank you, we are on it (${mark}).` }),
      });
      if (res.status !== 201) throw new Error(`a reply answered ${res.status}: ${res.body.slice(0, 200)}`);
      if (tag === 'live') answered.set(mark, performance.now());
    };
    const figure = await h.compareRuns({
      name: `staff replies with ${STREAMS} customer streams open, to streaming customers vs to customers without a stream, ${CONNECTIONS} in flight`,
      connections: CONNECTIONS,
      candidate: (window) => measureLoop(window, reply(streaming, 'live'), progress),
      baseline: (window) => measureLoop(window, reply(quiet, 'quiet'), progress),
    });
    // The last replies' events: give the relay and the hub a moment before reading the delays.
    await new Promise((r) => setTimeout(r, 3000));
    const delays = [...answered]
      .filter(([mark]) => arrivals.has(mark))
      .map(([mark, at]) => arrivals.get(mark)! - at)
      .sort((a, b) => a - b);
    const pct = (p: number) => delays[Math.min(delays.length - 1, Math.floor(p * delays.length))] ?? Number.NaN;
    progress(
      `delay from a reply's answer to the customer's stream: p50 ${fmt(pct(0.5), 1)} ms, p99 ${fmt(pct(0.99), 1)} ms ` +
        `(${delays.length} of ${answered.size} replies seen on their stream)`,
    );
    return [figure];
  } finally {
    for (const s of sockets) s.destroy();
    await h.close();
    await own.close();
  }
}

/** `count` customers with an API session and an access token each, and a conversation staff opened with each. */
async function customers(api: Server, pool: Pool, admin: string, jwtSecret: string, count: number): Promise<Customer[]> {
  const made: Customer[] = Array.from({ length: count }, () => ({
    id: randomUUID(),
    sid: randomUUID(),
    token: '',
    conversation: '',
  }));
  await pool.query(
    `insert into customers (id, created_at, updated_at, password_hash, email, first_name, last_name)
     select c.id, now(), now(), 'bench-no-login', 'conv-' || c.id || '@bench.test', 'Bench', 'Customer'
       from unnest($1::uuid[]) as c(id)`,
    [made.map((c) => c.id)],
  );
  await pool.query(
    `insert into sessions (id, created_at, updated_at, principal_type, kind, principal_id, last_used_at, expires_at)
     select s.sid, now(), now(), 'customer', 'api', s.cid, now(), now() + interval '1 day'
       from unnest($1::uuid[], $2::uuid[]) as s(sid, cid)`,
    [made.map((c) => c.sid), made.map((c) => c.id)],
  );
  const config = benchConfig('api', { BENCH_JWT_SECRET: jwtSecret });
  const tokens = new AccessTokens(jwtSecret, config.jwt.issuer, config.jwt.audience);
  for (const c of made) c.token = await tokens.sign({ sub: c.id, type: 'customer', sid: c.sid, ttlSeconds: 3600 });
  progress(`opening ${count} conversations through the API`);
  let next = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < made.length) {
        const c = made[next++]!;
        const opened = await request<{ id: string }>(
          api,
          'POST',
          `/api/crm/customers/${c.id}/conversations`,
          admin,
          { subject: 'Your withdrawal', body: 'We have a question about your last withdrawal.' },
          201,
        );
        c.conversation = opened.id;
      }
    }),
  );
  return made;
}

/** One customer's stream; each reply's mark is timed at its first arrival. */
function openStream(api: Server, token: string, arrivals: Map<string, number>): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      api.url('/customers/me/stream'),
      { agent: STREAM_AGENT, headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` } },
      (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`a stream answered ${res.statusCode}`));
          return;
        }
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const now = performance.now();
          for (const m of chunk.matchAll(/\((live-\d+)\)/g)) if (!arrivals.has(m[1]!)) arrivals.set(m[1]!, now);
        });
        resolve(res);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const STREAM_AGENT = new Agent({ keepAlive: false, maxSockets: Infinity });
