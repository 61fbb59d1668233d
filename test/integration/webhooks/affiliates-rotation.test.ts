import { randomBytes, randomUUID } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { adminToken } from '../../helpers/identity';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver';

/**
 * Webhooks per affiliate, secret rotation and event sequence numbers,
 * against real receivers on loopback that verify with the `standardwebhooks` package:
 * - a webhook with an affiliate_id receives only events about that affiliate's customers, one
 *   without receives every event it subscribes to, and an event about no customer (a group
 *   change) goes only to webhooks without an affiliate_id;
 * - after a rotation, deliveries carry both signatures for 24 hours and verify under either
 *   secret; after the window, under the new one only;
 * - every event carries its sequence, so a redelivery arriving after newer events can be ordered.
 */
jest.setTimeout(90_000);

let app: TestApp;
let admin: string;
const receivers: Receiver[] = [];
const ENV = { OUTBOX_RELAY_INTERVAL_MS: '200', WEBHOOK_TIMEOUT_MS: '1000' };

beforeAll(async () => {
  app = await startTestApp({ label: 'webhook-affiliates', env: ENV });
  admin = await adminToken(app);
});
afterAll(async () => {
  await app?.stop();
  for (const r of receivers) await r.close();
});

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

async function receiver(secret: string): Promise<Receiver> {
  const r = await startReceiver(secret, () => ({ status: 204 }));
  receivers.push(r);
  return r;
}

async function webhook(url: string, secret: string, body: Record<string, unknown>): Promise<string> {
  const res = await app.request('POST', '/webhooks', { token: admin, body: { endpoint_url: url, secret, ...body } });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function customer(affiliate?: string): Promise<string> {
  const res = await app.request('POST', '/api/crm/customers', {
    token: admin,
    body: {
      email: `aff-${randomBytes(4).toString('hex')}@example.com`,
      password: 'Harbour-Lantern-42-Quiet',
      first_name: 'Anna',
      last_name: 'Keller',
      ...(affiliate ? { affiliate_id: affiliate } : {}),
    },
  });
  expect(res.status).toBe(201);
  expect(res.body.affiliate_id).toBe(affiliate ?? null);
  return res.body.id;
}

const sendTest = async (id: string) => {
  const res = await app.request('POST', `/webhooks/${id}/test`, { token: admin });
  expect(res.status).toBe(202);
  return res.body.event_id as string;
};

/** What each receiver got, as [type, customer or group id]. */
const got = (r: Receiver) =>
  r.received
    .flatMap((x) => x.verified?.events ?? [])
    .map((e) => [e.type, String(e.data.id)])
    .sort();

describe('affiliates', () => {
  test('when two affiliates and a broker-wide webhook listen, then each affiliate hears only its customers and the broker-wide one hears all, group changes included', async () => {
    const secret = newSecret();
    const [ra, rb, rall] = [await receiver(secret), await receiver(secret), await receiver(secret)];
    const events = ['customer.created', 'group.updated'];
    await webhook(ra.url, secret, { affiliate_id: 'aff-north', events });
    await webhook(rb.url, secret, { affiliate_id: 'aff-south', events });
    await webhook(rall.url, secret, { events });

    const north = await customer('aff-north');
    const south = await customer('aff-south');
    const direct = await customer();
    const g = await app.request('POST', '/groups', { token: admin, body: { name: `A-${randomBytes(4).toString('hex')}` } });
    expect(g.status).toBe(201);
    expect((await app.request('PATCH', `/groups/${g.body.id}`, { token: admin, body: { description: 'changed' } })).status).toBe(
      200,
    );

    await waitFor('the broker-wide webhook to hear all four', async () => got(rall).length >= 4);
    // A webhook is sent its events in publication order: once each affiliate has heard a later
    // customer of its own, a stray earlier event would already be there.
    const north2 = await customer('aff-north');
    const south2 = await customer('aff-south');
    await waitFor(
      'the affiliates to hear their later customers',
      async () => got(ra).some(([, id]) => id === north2) && got(rb).some(([, id]) => id === south2),
    );
    expect(got(ra)).toEqual(
      [
        ['customer.created', north],
        ['customer.created', north2],
      ].sort(),
    );
    expect(got(rb)).toEqual(
      [
        ['customer.created', south],
        ['customer.created', south2],
      ].sort(),
    );
    await waitFor('the broker-wide webhook to hear all six', async () => got(rall).length >= 6);
    expect(got(rall)).toEqual(
      [
        ['customer.created', north],
        ['customer.created', south],
        ['customer.created', direct],
        ['group.updated', g.body.id],
        ['customer.created', north2],
        ['customer.created', south2],
      ].sort(),
    );
  });

  test('when staff set, change and clear a customer affiliate_id, then the customer view shows it and each change is audited', async () => {
    const id = await customer();
    const set = await app.request('PATCH', `/api/crm/customers/${id}`, { token: admin, body: { affiliate_id: 'aff-east' } });
    expect(set.status).toBe(200);
    expect(set.body.affiliate_id).toBe('aff-east');
    expect((await app.request('GET', `/api/crm/customers/${id}`, { token: admin })).body.affiliate_id).toBe('aff-east');
    const cleared = await app.request('PATCH', `/api/crm/customers/${id}`, { token: admin, body: { affiliate_id: null } });
    expect(cleared.body.affiliate_id).toBeNull();
    const bad = await app.request('PATCH', `/api/crm/customers/${id}`, { token: admin, body: { affiliate_id: 'x'.repeat(256) } });
    expect(bad.status).toBe(422);
    expect((await app.request('PATCH', `/api/crm/customers/${randomUUID()}`, { token: admin, body: {} })).status).toBe(404);
    const audit = await sql<{ before: any; after: any }>(
      app,
      `select before, after from audit_entries where action = 'customer.updated' and entity_id = ? order by created_at`,
      [id],
    );
    expect(audit.map((a) => [a.before.affiliate_id, a.after.affiliate_id])).toEqual([
      [null, 'aff-east'],
      ['aff-east', null],
    ]);
  });
});

describe('secret rotation', () => {
  test('when the secret is rotated, then deliveries verify under the old and the new secret for 24 hours, then under the new one only', async () => {
    const oldSecret = newSecret();
    const newer = newSecret();
    const r = await receiver(oldSecret);
    const id = await webhook(r.url, oldSecret, { events: ['payout.approved'] });

    const rotated = await app.request('POST', `/webhooks/${id}/rotate-secret`, { token: admin, body: { secret: newer } });
    expect(rotated.status).toBe(200);
    const expires = Date.parse(rotated.body.previous_secret_expires_at);
    expect(Math.abs(expires - Date.now() - 24 * 3600_000)).toBeLessThan(60_000);
    expect(JSON.stringify(rotated.body)).not.toContain(newer);

    const first = await sendTest(id);
    await waitFor('the first delivery', async () => r.received.length >= 1);
    const during = r.received[0]!;
    expect(during.verified?.events.map((e) => e.id)).toEqual([first]);
    // Both signatures, space-separated, new first; the package verifies under either secret.
    const signatures = String(during.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    expect(signatures.every((s) => s.startsWith('v1,'))).toBe(true);
    expect(() => new StandardWebhook(newer).verify(during.body, during.headers as Record<string, string>)).not.toThrow();
    expect(() => new StandardWebhook(oldSecret).verify(during.body, during.headers as Record<string, string>)).not.toThrow();

    // The window over: the old secret no longer signs.
    await sql(app, `update webhooks set previous_secret_expires_at = now() - interval '1 second' where id = ?`, [id]);
    expect((await app.request('GET', `/webhooks/${id}`, { token: admin })).body.previous_secret_expires_at).toBeNull();
    await sendTest(id);
    await waitFor('the second delivery', async () => r.received.length >= 2);
    const after = r.received[1]!;
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(after.verified).toBeNull();
    expect(() => new StandardWebhook(newer).verify(after.body, after.headers as Record<string, string>)).not.toThrow();

    const audit = await sql<{ row: string }>(
      app,
      `select row_to_json(a)::text as row from audit_entries a where action = 'webhook.secret_rotated' and entity_id = ?`,
      [id],
    );
    expect(audit).toHaveLength(1);
    expect(audit[0]!.row).not.toContain(newer.slice(6, 30));
  });

  test('when a new secret is sent by PATCH, then it is a rotation too', async () => {
    const secret = newSecret();
    const r = await receiver(secret);
    const id = await webhook(r.url, secret, { events: ['payout.approved'] });
    const res = await app.request('PATCH', `/webhooks/${id}`, { token: admin, body: { secret: newSecret() } });
    expect(res.status).toBe(200);
    expect(res.body.previous_secret_expires_at).not.toBeNull();
  });
});

describe('sequence numbers', () => {
  test('when an older delivery is redelivered after a newer one, then every event carries its write-order sequence and the receiver can put it back in order', async () => {
    const secret = newSecret();
    const r = await receiver(secret);
    const id = await webhook(r.url, secret, { events: ['payout.approved'] });
    const first = await sendTest(id);
    await waitFor('the first delivery', async () => r.received.length >= 1);
    const second = await sendTest(id);
    await waitFor('the second delivery', async () => r.received.length >= 2);
    const list = await app.request('GET', `/webhooks/${id}/deliveries`, { token: admin });
    const oldest = list.body.items.find((d: { event_ids: string[] }) => d.event_ids.includes(first));
    expect((await app.request('POST', `/webhooks/${id}/deliveries/${oldest.id}/redeliver`, { token: admin })).status).toBe(202);
    await waitFor('the redelivery', async () => r.received.length >= 3);

    const arrived = r.received.flatMap((x) => x.verified!.events);
    expect(arrived.map((e) => e.id)).toEqual([first, second, first]);
    const seqs = await sql<{ id: string; seq: string }>(
      app,
      'select id, seq::text as seq from domain_events where id in (?, ?)',
      [first, second],
    );
    const seqOf = Object.fromEntries(seqs.map((s) => [s.id, Number(s.seq)]));
    expect(arrived.map((e) => e.sequence)).toEqual([seqOf[first], seqOf[second], seqOf[first]]);
    // A receiver ordering by sequence sees the redelivered event as older than the one it has.
    expect(arrived[2]!.sequence).toBeLessThan(arrived[1]!.sequence);
  });
});
