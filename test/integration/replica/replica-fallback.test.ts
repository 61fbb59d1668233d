import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { adminToken, createCustomer } from '../../helpers/identity';
import { replicaDatabaseUrl, TEST_REPLICA_URL } from '../../helpers/test-database';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { buildReport } from '../reports/report-kit';
import { fallbacks, metric } from './replica-kit';

/**
 * Against a real streaming replica of the test server (scripts/replica-check.sh starts it and
 * hands over its pg_ctl as TEST_REPLICA_CTL): reads go to it while it streams, wait for it
 * when it is behind, and go back to the primary when it stops, until it returns. Outside that
 * lane there is no replica to stop, and the file is skipped.
 */
const CTL = process.env.TEST_REPLICA_CTL;
const lane = TEST_REPLICA_URL && CTL ? describe : describe.skip;
const run = promisify(execFile);
jest.setTimeout(120_000);

/** One statement on the replica's copy of the app's database (or its maintenance database). */
async function onReplica<T>(app: TestApp, query: string, database = app.databaseName): Promise<T[]> {
  const client = new Client({ connectionString: replicaDatabaseUrl(database) });
  await client.connect();
  try {
    return (await client.query(query)).rows as T[];
  } finally {
    await client.end();
  }
}

async function replicaState(app: TestApp): Promise<string | undefined> {
  return (await app.request('GET', '/health')).body.replica?.state;
}

/** The events the feed gives after `after`, once the relay has handed every event over. */
async function feedAfter(
  app: TestApp,
  token: string,
  after: string,
): Promise<Array<{ id: string; type: string; sequence: number }>> {
  await waitFor('every event to be published', async () => {
    const [row] = await sql<{ n: number }>(app, 'select count(*)::int as n from domain_events where publication_seq is null');
    return row!.n === 0 ? true : undefined;
  });
  const res = await app.request('GET', `/api/crm/events?after=${after}&limit=1000`, { token });
  expect(res.status).toBe(200);
  return res.body.items;
}

async function feedEnd(app: TestApp, token: string): Promise<string> {
  return (await app.request('GET', '/api/crm/events?after=now', { token })).body.next_after as string;
}

lane('a streaming read replica', () => {
  let app: TestApp;
  let admin: string;
  const today = new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    // Other files clone their databases meanwhile, each clone a burst of WAL to replay: on a busy
    // machine the replica may need more than the default second to catch up with a read.
    app = await startTestApp({ label: 'replica-lane', env: { REPLICA_WAIT_MS: '5000' } });
    admin = await adminToken(app);
    await waitFor('the replica to stream', async () => ((await replicaState(app)) === 'streaming' ? true : undefined));
  });
  afterAll(async () => {
    // A failed test must not leave the replica stopped or paused for the next.
    if (CTL) await run(CTL, ['status']).catch(() => run(CTL, ['start']));
    await onReplica(app, 'select pg_wal_replay_resume()', 'postgres').catch(() => undefined);
    await app?.stop();
  });

  test('when it streams, then a report and the feed are read from it, each including what was just written, none sent to the primary', async () => {
    const before = await feedEnd(app, admin);
    const customer = await createCustomer(app, admin);
    const items = await feedAfter(app, admin, before);
    expect(items.map((e) => e.type)).toContain('customer.created');
    const { report } = await buildReport(app, admin, { type: 'trades', format: 'csv', params: { from: today, to: today } });
    expect(report).toMatchObject({ status: 'completed', error: null });
    const timeline = await app.request('GET', `/api/crm/customers/${customer.id}/timeline`, { token: admin });
    expect(timeline.status).toBe(200);
    expect(timeline.body.items.map((i: { summary: string }) => i.summary)).toContain('customer.created');
    expect(
      (await app.request('GET', '/metrics')).text.split('\n').filter((l) => l.startsWith('db_replica_fallbacks_total{')),
    ).toEqual([]);
    // The service holds connections to the replica's copy of its database: the reads went there.
    const [seen] = await onReplica<{ n: number }>(
      app,
      `select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
    );
    expect(seen!.n).toBeGreaterThan(0);
    const health = (await app.request('GET', '/health')).body;
    expect(health.replica).toMatchObject({ state: 'streaming', lag_ms: expect.any(Number) });
    expect(await metric(app, 'db_replica_up')).toBe(1);
  });

  test('when it stops replaying, then a read that must include a new event waits for it, then takes it from the primary', async () => {
    const before = await feedEnd(app, admin);
    await onReplica(app, 'select pg_wal_replay_pause()', 'postgres');
    try {
      await createCustomer(app, admin);
      const items = await feedAfter(app, admin, before);
      expect(items.map((e) => e.type)).toContain('customer.created');
      expect(await metric(app, 'db_replica_fallbacks_total', 'reason="behind"')).toBeGreaterThan(0);
    } finally {
      await onReplica(app, 'select pg_wal_replay_resume()', 'postgres');
    }
  });

  test('when it is stopped mid-run, then reads go to the primary, counted and logged once at warn, and return to it when it is back', async () => {
    await run(CTL!, ['stop', '-m', 'fast']);
    await waitFor('the probe to find it down', async () => ((await replicaState(app)) === 'down' ? true : undefined));
    const down = await metric(app, 'db_replica_fallbacks_total', 'reason="down"');
    const before = await feedEnd(app, admin);
    await createCustomer(app, admin);
    expect((await feedAfter(app, admin, before)).map((e) => e.type)).toContain('customer.created');
    const { report } = await buildReport(app, admin, { type: 'trades', format: 'json', params: { from: today, to: today } });
    expect(report.status).toBe('completed');
    expect(await metric(app, 'db_replica_fallbacks_total', 'reason="down"')).toBeGreaterThanOrEqual(down + 2);
    expect(await metric(app, 'db_replica_up')).toBe(0);
    expect(
      app.logs.filter((l) => l.msg === 'read replica not answering: heavy reads go to the primary' && l.level === 40),
    ).toHaveLength(1);

    await run(CTL!, ['start']);
    await waitFor(
      'the replica to stream again',
      async () => ((await replicaState(app)) === 'streaming' ? true : undefined),
      60_000,
    );
    expect(app.logs.some((l) => l.msg === 'read replica answers again: heavy reads go to it')).toBe(true);
    // Connections the restart cut may cost a read or two; after that the replica serves again.
    await feedAfter(app, admin, before);
    await waitFor('the replica to serve', async () => ((await replicaState(app)) === 'streaming' ? true : undefined));
    const settled = await fallbacks(app);
    const again = await feedAfter(app, admin, before);
    expect(again.map((e) => e.type)).toContain('customer.created');
    expect(await fallbacks(app)).toBe(settled);
  });
});
