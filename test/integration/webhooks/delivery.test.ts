import { randomBytes } from 'node:crypto';
import { adminToken, createCustomer } from '../../helpers/identity';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver';
import { fundedAccount, setUpMarket } from '../../helpers/trading';

/**
 * Webhook delivery end to end against real HTTP receivers on loopback that verify every
 * signature with the `standardwebhooks` package: the relay hands events to the webhooks
 * consumer, which fans them out as it takes them, and the deliverers sign, batch, retry and record.
 * Two instances of the deployment share the database and queues, so every delivery races
 * between two sets of workers.
 */
jest.setTimeout(60_000);

let app: TestApp;
let twin: TestApp;
let admin: string;
const receivers: Receiver[] = [];
const ENV = { OUTBOX_RELAY_INTERVAL_MS: '200', WEBHOOK_TIMEOUT_MS: '1000' };

beforeAll(async () => {
  app = await startTestApp({ label: 'webhookdelivery', env: ENV });
  twin = await startTestApp({ label: 'webhookdelivery', env: ENV, shareWith: app });
  admin = await adminToken(app);
});
afterAll(async () => {
  await twin?.stop();
  await app?.stop();
  for (const r of receivers) await r.close();
});

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

async function receiver(secret: string, behaviour?: Parameters<typeof startReceiver>[1]): Promise<Receiver> {
  const r = await startReceiver(secret, behaviour);
  receivers.push(r);
  return r;
}

/** A webhook that hears only `events` (by default a type no test writes) and its own test events. */
async function webhook(url: string, secret: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await app.request('POST', '/webhooks', {
    token: admin,
    body: { endpoint_url: url, secret, events: ['payout.approved'], ...body },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

const sendTest = async (id: string) => {
  const res = await app.request('POST', `/webhooks/${id}/test`, { token: admin });
  expect(res.status).toBe(202);
  return res.body.event_id as string;
};

const deliveries = async (id: string, query = '') => {
  const res = await app.request('GET', `/webhooks/${id}/deliveries${query}`, { token: admin });
  expect(res.status).toBe(200);
  return res.body as { items: any[]; total: number };
};

test('when private URLs are allowed, then the service warns at start', () => {
  expect(app.logs.some((l) => l.level === 40 && String(l.msg).includes('WEBHOOKS_ALLOW_PRIVATE_URLS is on'))).toBe(true);
});

test('when a test event is sent, then it arrives once, signed as Standard Webhooks verifies, and the attempt is listed', async () => {
  const secret = newSecret();
  const r = await receiver(secret, () => ({ status: 200, body: 'thanks' }));
  const id = await webhook(r.url, secret);
  const eventId = await sendTest(id);
  await waitFor('the test event', async () => r.received.length > 0);
  const [got] = r.received;
  expect(got!.verified).not.toBeNull();
  expect(got!.verified!.events).toEqual([
    {
      id: eventId,
      type: 'webhook.test',
      sequence: expect.any(Number),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: { webhook_id: id, message: expect.any(String) },
    },
  ]);
  expect(got!.headers['content-type']).toBe('application/json');
  const list = await waitFor('the delivery recorded', async () => {
    const l = await deliveries(id);
    return l.items[0]?.status === 'delivered' ? l : undefined;
  });
  expect(list.items[0]).toMatchObject({
    id: got!.headers['webhook-id'],
    event_count: 1,
    event_ids: [eventId],
    attempts: [{ attempt: 1, status_code: 200, error: null, response_body: 'thanks', duration_ms: expect.any(Number) }],
  });
  // Once: nothing more arrives.
  await new Promise((res) => setTimeout(res, 600));
  expect(r.received).toHaveLength(1);
});

test('when the endpoint answers 500 then 200, then the batch is retried after about 5 s under the same webhook-id', async () => {
  const secret = newSecret();
  const r = await receiver(secret, (n) => (n === 0 ? { status: 500, body: 'boom' } : { status: 200 }));
  const id = await webhook(r.url, secret);
  const eventId = await sendTest(id);
  await waitFor('the retry', async () => r.received.length >= 2, 15_000);
  const [first, second] = r.received;
  expect(first!.headers['webhook-id']).toBe(second!.headers['webhook-id']);
  expect(second!.headers['webhook-timestamp']).not.toBe(first!.headers['webhook-timestamp']);
  expect(second!.headers['webhook-signature']).not.toBe(first!.headers['webhook-signature']);
  expect(second!.verified?.events.map((e) => e.id)).toEqual([eventId]);
  const gap = second!.at - first!.at;
  expect(gap).toBeGreaterThanOrEqual(4400);
  expect(gap).toBeLessThan(8000);
  const list = await waitFor('delivered', async () => {
    const l = await deliveries(id, '?status=delivered');
    return l.total === 1 ? l : undefined;
  });
  expect(list.items[0].attempts.map((a: any) => [a.status_code, a.response_body])).toEqual([
    [500, 'boom'],
    [200, null],
  ]);
  expect(list.items[0].attempts[0].error).toMatch(/500/);
});

test('when the endpoint answers 410, then the webhook is disabled with a reason and a webhook.disabled event', async () => {
  const secret = newSecret();
  const r = await receiver(secret, () => ({ status: 410 }));
  const id = await webhook(r.url, secret);
  await sendTest(id);
  const after = await waitFor('disabled', async () => {
    const w = await app.request('GET', `/webhooks/${id}`, { token: admin });
    return w.body.is_active === false ? w.body : undefined;
  });
  expect(after.disabled_reason).toMatch(/410/);
  expect(r.received).toHaveLength(1);
  const events = await sql<{ data: any }>(
    app,
    "select data from domain_events where type = 'webhook.disabled' and aggregate_id = ?",
    [id],
  );
  expect(events).toHaveLength(1);
  expect(events[0]!.data).toMatchObject({ webhook_id: id, reason: expect.stringMatching(/410/) });
  expect((await deliveries(id, '?status=failed')).total).toBe(1);
  // Redelivery of a disabled webhook's delivery is refused until it is on again.
  const [delivery] = (await deliveries(id)).items;
  expect((await app.request('POST', `/webhooks/${id}/deliveries/${delivery.id}/redeliver`, { token: admin })).status).toBe(409);
});

test('when one endpoint hangs, then its attempt times out and another webhook is served meanwhile', async () => {
  const secret = newSecret();
  const slow = await receiver(secret, () => 'hang');
  const fast = await receiver(secret, () => ({ status: 204 }));
  const slowId = await webhook(slow.url, secret);
  const fastId = await webhook(fast.url, secret);
  await sendTest(slowId);
  await waitFor('the slow request in flight', async () => slow.received.length > 0);
  const sentAt = Date.now();
  await sendTest(fastId);
  await waitFor('the fast delivery', async () => fast.received.length > 0, 5000);
  // The fast webhook did not queue behind the hanging one.
  expect(fast.received[0]!.at - sentAt).toBeLessThan(1500);
  const list = await waitFor('the timeout recorded', async () => {
    const l = await deliveries(slowId);
    return l.items[0]?.attempts.length ? l : undefined;
  });
  expect(list.items[0].status).toBe('pending');
  expect(list.items[0].attempts[0]).toMatchObject({ status_code: null, error: expect.stringMatching(/timeout/) });
  expect(list.items[0].attempts[0].duration_ms).toBeGreaterThanOrEqual(900);
  expect(list.items[0].attempts[0].duration_ms).toBeLessThan(3000);
  await app.request('PATCH', `/webhooks/${slowId}`, { token: admin, body: { is_active: false } });
});

test('when 250 events are written at batch_size_max 100, then they arrive in 3 deliveries, in write order, each once', async () => {
  const secret = 'a plain secret that is long enough 1234';
  const r = await receiver(secret, () => ({ status: 200 }));
  const id = await webhook(r.url, secret, { events: ['order.opened'], batch_size_max: 100 });
  const account = randomBytes(4).toString('hex');
  await sql(
    app,
    `insert into domain_events (id, created_at, updated_at, type, aggregate_type, aggregate_id, data)
     select gen_random_uuid(), now(), now(), 'order.opened', 'order', ?, jsonb_build_object('n', i) from generate_series(1, 250) i`,
    [account],
  );
  await waitFor('250 events', async () => r.eventIds().length >= 250, 20_000);
  await new Promise((res) => setTimeout(res, 500));
  expect(r.received.map((x) => x.verified?.events.length)).toEqual([100, 100, 50]);
  expect(new Set(r.received.map((x) => x.headers['webhook-id'])).size).toBe(3);
  const ns = r.received.flatMap((x) => x.verified!.events.map((e) => e.data.n));
  expect(ns).toEqual(Array.from({ length: 250 }, (_, i) => i + 1));
  const list = await deliveries(id, '?status=delivered');
  expect(list.total).toBe(3);
  expect(list.items.map((d: any) => d.event_count).sort()).toEqual([100, 100, 50].sort());

  // Redelivering one sends the very same batch under the same id.
  const oldest = list.items[list.items.length - 1];
  const res = await app.request('POST', `/webhooks/${id}/deliveries/${oldest.id}/redeliver`, { token: admin });
  expect(res.status).toBe(202);
  await waitFor('the redelivery', async () => r.received.length === 4);
  expect(r.received[3]!.headers['webhook-id']).toBe(oldest.id);
  expect(r.received[3]!.verified!.events.map((e) => e.id)).toEqual(oldest.event_ids);
});

/** `count` events of `type` for one new account, committed together, each with its number n from 1. */
async function insertNumberedEvents(type: string, count: number): Promise<void> {
  await sql(
    app,
    `insert into domain_events (id, created_at, updated_at, type, aggregate_type, aggregate_id, data)
     select gen_random_uuid(), now(), now(), ?, 'order', ?, jsonb_build_object('n', i) from generate_series(1, ?::int) i`,
    [type, randomBytes(4).toString('hex'), count],
  );
}

test('when the second of five deliveries claimed together fails, then the rest wait behind its retry and every event arrives once, in order', async () => {
  const secret = newSecret();
  const r = await receiver(secret, (n) => (n === 1 ? { status: 500 } : { status: 200 }));
  const id = await webhook(r.url, secret, { events: ['order.closed'], batch_size_max: 1 });
  await insertNumberedEvents('order.closed', 5);
  await waitFor('five events delivered', async () => (await deliveries(id, '?status=delivered')).total === 5, 20_000);
  const ns = r.received.map((x) => x.verified!.events[0]!.data.n);
  expect(ns).toEqual([1, 2, 2, 3, 4, 5]);
  // The deliveries handed back unsent count no attempt: each went out once.
  const list = await deliveries(id, '?status=delivered');
  expect(list.items.map((d: any) => d.attempts.length).sort()).toEqual([1, 1, 1, 1, 2]);
  expect(list.items.map((d: any) => d.attempts_in_round).sort()).toEqual([1, 1, 1, 1, 2]);
});

test('when a delivery fails while the runs behind it are already claimed, then they are handed back and every event still arrives once, in order, after its retry', async () => {
  const secret = newSecret();
  // Past the first run of claims, so the run behind it is claimed while this one is sent.
  const failing = 40;
  const r = await receiver(secret, (n) => (n === failing ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 }));
  const id = await webhook(r.url, secret, { events: ['pending_order.modified'], batch_size_max: 1 });
  await insertNumberedEvents('pending_order.modified', 100);
  await waitFor('100 events delivered', async () => (await deliveries(id, '?status=delivered')).total === 100, 30_000);
  const ns = r.received.map((x) => x.verified!.events[0]!.data.n);
  const expected = Array.from({ length: 100 }, (_, i) => i + 1);
  expected.splice(failing + 1, 0, failing + 1);
  expect(ns).toEqual(expected);
  // The retry came after its Retry-After, and nothing behind it went out in between.
  expect(r.received[failing + 1]!.at - r.received[failing]!.at).toBeGreaterThanOrEqual(900);
  const list = await deliveries(id, '?status=delivered&page_size=100');
  expect(list.items.map((d: any) => d.attempts.length).sort()).toEqual([...Array(99).fill(1), 2]);
});

/** A webhook with two test batches delivered one after the other, newest first. */
async function twoDeliveredBatches() {
  const secret = newSecret();
  const r = await receiver(secret, () => ({ status: 200 }));
  const id = await webhook(r.url, secret);
  for (let n = 1; n <= 2; n++) {
    await sendTest(id);
    await waitFor(`batch ${n} delivered`, async () => (await deliveries(id, '?status=delivered')).total === n);
  }
  const [newer, older] = (await deliveries(id)).items;
  return { id, newer, older };
}

test('when an older batch is reopened while a newer one is leased, then neither can be claimed until the lease ends', async () => {
  const { id, newer, older } = await twoDeliveredBatches();
  // In one transaction that is rolled back, so the running workers never see it: the newer
  // batch is in flight (leased, as a retry or a continuation holds it) when a redelivery
  // reopens the older one, which sorts first.
  const em = app.runtime.services.orm.em.fork();
  const claim = async () =>
    (
      await em.execute<Array<{ delivery_id: string }>>(
        `select delivery_id from webhook_delivery_steps(?::uuid, 10000, 1, '[]'::jsonb, '[]'::jsonb, false, '[]'::jsonb)`,
        [id],
      )
    ).map((row) => row.delivery_id);
  await em.begin();
  try {
    await em.execute(
      `update webhook_deliveries set status = 'pending', next_attempt_at = now(),
              lease_until = case when id = ? then now() + interval '1 minute' end where id in (?, ?)`,
      [newer.id, newer.id, older.id],
    );
    expect(await claim()).toEqual([]);
    // The newer attempt has ended (a failure: due again later); now the older batch is next.
    await em.execute(
      `update webhook_deliveries set lease_until = null, next_attempt_at = now() + interval '1 hour' where id = ?`,
      [newer.id],
    );
    expect(await claim()).toEqual([older.id]);
  } finally {
    await em.rollback();
  }
});

test('when a claim is made behind a held run, then it takes only new batches, and none while another delivery is open or a held one has lapsed', async () => {
  const { id, newer, older } = await twoDeliveredBatches();
  // Rolled back at the end, so the running workers never see it: the newer batch is in
  // flight, held by this caller, with one event waiting behind it.
  const em = app.runtime.services.orm.em.fork();
  const claim = async (held: string[]) =>
    (
      await em.execute<Array<{ delivery_id: string }>>(
        `select delivery_id from webhook_delivery_steps(?::uuid, 10000, 4, '[]'::jsonb, '[]'::jsonb, false, ?::jsonb)`,
        [id, JSON.stringify(held)],
      )
    ).map((row) => row.delivery_id);
  await em.begin();
  try {
    // Published already (the relay leaves it alone), past the webhook's cursor.
    await em.execute(
      `insert into domain_events (id, created_at, updated_at, type, aggregate_type, aggregate_id, data, published_at, publication_seq)
       values (gen_random_uuid(), now(), now(), 'payout.approved', 'payout', 'held-run', '{}', now(),
               nextval('domain_event_publication_seq'))`,
    );
    await em.execute(`update webhook_deliveries set status = 'pending', lease_until = now() + interval '1 minute' where id = ?`, [
      newer.id,
    ]);
    // A redelivery reopened the older batch: it goes first, alone, after the held run.
    await em.execute(`update webhook_deliveries set status = 'pending', next_attempt_at = now() where id = ?`, [older.id]);
    expect(await claim([newer.id])).toEqual([]);
    await em.execute(`update webhook_deliveries set status = 'delivered' where id = ?`, [older.id]);
    // The held lease has lapsed: the run may be another worker's now.
    await em.execute(`update webhook_deliveries set lease_until = now() - interval '1 second' where id = ?`, [newer.id]);
    expect(await claim([newer.id])).toEqual([]);
    await em.execute(`update webhook_deliveries set lease_until = now() + interval '1 minute' where id = ?`, [newer.id]);
    // Without holding it, the run in flight blocks every claim; holding it, the new batch is claimed behind it.
    expect(await claim([])).toEqual([]);
    const behind = await claim([newer.id]);
    expect(behind).toHaveLength(1);
    expect(behind[0]).not.toBe(newer.id);
  } finally {
    await em.rollback();
  }
});

test('when the endpoint sends Retry-After: 1, then the retry comes after about a second, not 5 s', async () => {
  const secret = newSecret();
  const r = await receiver(secret, (n) => (n === 0 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 }));
  const id = await webhook(r.url, secret);
  await sendTest(id);
  await waitFor('the retry', async () => r.received.length >= 2, 10_000);
  const gap = r.received[1]!.at - r.received[0]!.at;
  expect(gap).toBeGreaterThanOrEqual(900);
  expect(gap).toBeLessThan(3500);
});

test('when every attempt has failed for 5 days, then the next failure disables the webhook', async () => {
  const secret = newSecret();
  const r = await receiver(secret, () => ({ status: 500 }));
  const id = await webhook(r.url, secret);
  await sql(app, "update webhooks set failing_since = now() - interval '5 days 1 minute' where id = ?", [id]);
  await sendTest(id);
  const after = await waitFor('disabled', async () => {
    const w = await app.request('GET', `/webhooks/${id}`, { token: admin });
    return w.body.is_active === false ? w.body : undefined;
  });
  expect(after.disabled_reason).toMatch(/5 days/);
  expect(r.received).toHaveLength(1);
  // Turned on again by staff, it starts afresh.
  const on = await app.request('PATCH', `/webhooks/${id}`, { token: admin, body: { is_active: true } });
  expect(on.body).toMatchObject({ is_active: true, disabled_reason: null });
  const [row] = await sql<{ failing_since: Date | null }>(app, 'select failing_since from webhooks where id = ?', [id]);
  expect(row!.failing_since).toBeNull();
  await app.request('PATCH', `/webhooks/${id}`, { token: admin, body: { is_active: false } });
});

test('when the endpoint answers a redirect, then it is not followed and the attempt fails', async () => {
  const secret = newSecret();
  const target = await receiver(secret, () => ({ status: 204 }));
  const r = await receiver(secret, () => ({ status: 307, headers: { location: target.url } }));
  const id = await webhook(r.url, secret);
  await sendTest(id);
  const list = await waitFor('the attempt recorded', async () => {
    const l = await deliveries(id);
    return l.items[0]?.attempts.length ? l : undefined;
  });
  expect(list.items[0].attempts[0]).toMatchObject({ status_code: 307, error: expect.stringMatching(/307/) });
  expect(list.items[0].status).toBe('pending');
  expect(target.received).toHaveLength(0);
  await app.request('PATCH', `/webhooks/${id}`, { token: admin, body: { is_active: false } });
});

test('when orders open and close, then the webhook body is compact JSON whose events carry the REST answer’s fields in its order', async () => {
  const secret = newSecret();
  const r = await receiver(secret);
  await webhook(r.url, secret, { events: ['order.opened', 'order.closed'] });
  const market = await setUpMarket(app, admin);
  const customer = await createCustomer(app, admin);
  const login = await fundedAccount(app, admin, customer.id, market.groupId);
  const opened = await app.request('POST', '/orders', { token: admin, body: { login, symbol: 'EURUSD', cmd: 0, volume: 0.1 } });
  expect(opened.status).toBe(201);
  const closed = await app.request('POST', `/orders/${opened.body.order}/close`, { token: admin });
  expect(closed.status).toBe(200);
  const received = await waitFor('both order events', async () => {
    const events = r.received.flatMap((g) => (g.verified?.events ?? []).map((e) => ({ raw: g.body, e })));
    return events.length >= 2 ? events : undefined;
  });
  for (const { raw } of received) expect(raw).toBe(JSON.stringify(JSON.parse(raw)));
  const byType = Object.fromEntries(received.map(({ e }) => [e.type, e.data]));
  // The same fields, the same values and the same order as the answers (JSON text compared, not objects).
  expect(JSON.stringify(byType['order.opened'])).toBe(opened.text);
  expect(JSON.stringify(byType['order.closed'])).toBe(closed.text);
});

test('when a webhook is turned off while it still owes events, then turned on again it sends them, in order, and none written while it was off', async () => {
  const secret = newSecret();
  const r = await receiver(secret, (n) => (n === 0 ? { status: 503, headers: { 'retry-after': '2' } } : { status: 200 }));
  const id = await webhook(r.url, secret, { events: ['withdrawal.requested'], batch_size_max: 1 });
  const unpublished = async () =>
    Number(
      (
        await sql<{ n: string }>(
          app,
          "select count(*) as n from domain_events where type = 'withdrawal.requested' and published_at is null",
        )
      )[0]!.n,
    );
  const write = async (from: number, to: number) => {
    await sql(
      app,
      `insert into domain_events (id, created_at, updated_at, type, aggregate_type, aggregate_id, data)
       select gen_random_uuid(), now(), now(), 'withdrawal.requested', 'withdrawal', 'owed', jsonb_build_object('n', i)
         from generate_series(?::int, ?::int) i`,
      [from, to],
    );
    await waitFor('the events relayed', async () => (await unpublished()) === 0);
  };
  // The first is refused and waits for its retry; the next two are owed behind it.
  await write(1, 1);
  await waitFor('the first attempt', async () => r.received.length === 1);
  await write(2, 3);
  expect((await app.request('PATCH', `/webhooks/${id}`, { token: admin, body: { is_active: false } })).status).toBe(200);
  await write(4, 5);
  expect((await app.request('PATCH', `/webhooks/${id}`, { token: admin, body: { is_active: true } })).status).toBe(200);
  await waitFor('the owed events', async () => r.received.length >= 4, 15_000);
  await new Promise((res) => setTimeout(res, 1000));
  expect(r.received.map((x) => x.verified!.events[0]!.data.n)).toEqual([1, 1, 2, 3]);
});
