import { adminToken, createStaff } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';

/**
 * Webhook management with WEBHOOKS_ALLOW_PRIVATE_URLS off,
 * as in production: validation, write-only secret, PATCH of only the fields sent, audit, and
 * the SSRF refusals at creation and update.
 */
let app: TestApp;
let admin: string;
const PUBLIC_URL = 'https://93.184.216.34/hooks/trading';
const SECRET = 'integrator-secret-0123456789-abcdef';

beforeAll(async () => {
  app = await startTestApp({ label: 'webhooksapi', env: { WEBHOOKS_ALLOW_PRIVATE_URLS: 'false', ROLE: 'api' } });
  admin = await adminToken(app);
});
afterAll(async () => {
  await app?.stop();
});

const create = (body: Record<string, unknown>, token = admin) => app.request('POST', '/webhooks', { token, body });

test('when a webhook is created with defaults, then 201 answers it without the secret', async () => {
  const res = await create({ endpoint_url: PUBLIC_URL, secret: SECRET });
  expect(res.status).toBe(201);
  expect(res.body).toEqual({
    id: expect.any(String),
    endpoint_url: PUBLIC_URL,
    is_active: true,
    batch_size_max: 100,
    affiliate_id: null,
    events: null,
    disabled_reason: null,
    previous_secret_expires_at: null,
    created_at: expect.any(String),
    updated_at: expect.any(String),
  });
  expect(res.text).not.toContain(SECRET);
  const got = await app.request('GET', `/webhooks/${res.body.id}`, { token: admin });
  expect(got.body).toEqual(res.body);
  // Stored sealed, never in clear.
  const [row] = await sql<{ secret_sealed: string }>(app, 'select secret_sealed from webhooks where id = ?', [res.body.id]);
  expect(row!.secret_sealed).not.toContain(SECRET);
  expect(row!.secret_sealed.startsWith('v2:development:')).toBe(true);
});

test('when fields are out of bounds, then 422 points at each', async () => {
  const res = await create({
    endpoint_url: PUBLIC_URL,
    secret: 'short',
    batch_size_max: 1001,
    events: ['order.opened', 'order.teleported'],
  });
  expect(res.status).toBe(422);
  const locs = res.body.detail.map((d: { loc: unknown[] }) => JSON.stringify(d.loc));
  expect(locs).toEqual(expect.arrayContaining(['["body","secret"]', '["body","batch_size_max"]', '["body","events",1]']));
  expect(JSON.stringify(res.body)).not.toContain('short"');
  expect((await create({ endpoint_url: PUBLIC_URL, secret: SECRET, batch_size_max: 0 })).status).toBe(422);
  expect((await create({ endpoint_url: PUBLIC_URL, secret: 'whsec_%%%%' })).status).toBe(422);
  expect((await create({ endpoint_url: PUBLIC_URL })).body.detail[0]).toMatchObject({ loc: ['body', 'secret'], type: 'missing' });
  const ok = await create({
    endpoint_url: PUBLIC_URL,
    secret: `whsec_${Buffer.alloc(32, 9).toString('base64')}`,
    batch_size_max: 1000,
    events: ['order.opened', 'order.closed'],
    affiliate_id: 'aff-42',
  });
  expect(ok.status).toBe(201);
  expect(ok.body).toMatchObject({ batch_size_max: 1000, events: ['order.opened', 'order.closed'], affiliate_id: 'aff-42' });
});

test.each([
  ['plain http', 'http://93.184.216.34/hook', /https/],
  ['loopback', 'https://127.0.0.1/hook', /loopback/],
  ['decimal loopback', 'https://2130706433/hook', /loopback/],
  ['octal loopback', 'https://0177.0.0.1/hook', /loopback/],
  ['hex loopback', 'https://0x7f.0.0.1/hook', /loopback/],
  ['IPv4-mapped IPv6 loopback', 'https://[::ffff:127.0.0.1]/hook', /loopback/],
  ['IPv4-compatible IPv6 loopback', 'https://[::127.0.0.1]/hook', /loopback/],
  ['IPv4-translated IPv6 loopback', 'https://[::ffff:0:127.0.0.1]/hook', /loopback/],
  ['NAT64 loopback', 'https://[64:ff9b::127.0.0.1]/hook', /loopback/],
  ['NAT64 local-use private', 'https://[64:ff9b:1:a01:2:300::]/hook', /private/],
  ['6to4 metadata', 'https://[2002:a9fe:a9fe::]/latest', /link-local/],
  ['private', 'https://10.1.2.3/hook', /private/],
  ['link-local metadata', 'https://169.254.169.254/latest', /link-local/],
  ['IPv6 metadata', 'https://[fd00:ec2::254]/', /metadata/],
  ['unspecified', 'https://0.0.0.0/', /unspecified/],
  ['a name resolving to loopback', 'https://localhost/hook', /resolves to a loopback/],
])('when the endpoint is %s, then creation is 422 at endpoint_url', async (_what, url, why) => {
  const res = await create({ endpoint_url: url, secret: SECRET });
  expect(res.status).toBe(422);
  expect(res.body.detail[0].loc).toEqual(['body', 'endpoint_url']);
  expect(res.body.detail[0].msg).toMatch(why);
});

test('when a webhook is patched, then only the fields sent change, and the audit never holds the secret', async () => {
  const made = await create({ endpoint_url: PUBLIC_URL, secret: SECRET, batch_size_max: 50, affiliate_id: 'aff-1' });
  const id = made.body.id;
  const newSecret = 'a-brand-new-secret-0987654321-zz';
  const res = await app.request('PATCH', `/webhooks/${id}`, { token: admin, body: { batch_size_max: 7, secret: newSecret } });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ endpoint_url: PUBLIC_URL, batch_size_max: 7, affiliate_id: 'aff-1', is_active: true });
  expect(res.text).not.toContain(newSecret);
  const off = await app.request('PATCH', `/webhooks/${id}`, { token: admin, body: { is_active: false, affiliate_id: null } });
  expect(off.body).toMatchObject({ is_active: false, affiliate_id: null, batch_size_max: 7 });
  const bad = await app.request('PATCH', `/webhooks/${id}`, { token: admin, body: { endpoint_url: 'https://192.168.0.1/' } });
  expect(bad.status).toBe(422);
  expect(bad.body.detail[0].loc).toEqual(['body', 'endpoint_url']);

  const audit = await sql<{ action: string; before: unknown; after: unknown }>(
    app,
    "select action, before, after from audit_entries where entity_type = 'webhook' and entity_id = ? order by created_at",
    [id],
  );
  expect(audit.map((a) => a.action)).toEqual(['webhook.created', 'webhook.updated', 'webhook.updated']);
  expect(JSON.stringify(audit)).not.toContain(newSecret);
  expect(JSON.stringify(audit)).not.toContain(SECRET);
  expect(audit[1]!.after).toMatchObject({ secret_changed: true, batch_size_max: 7 });
  // Nor any log line.
  expect(JSON.stringify(app.logs)).not.toContain(newSecret);
  expect(JSON.stringify(app.logs)).not.toContain(SECRET);
});

test('when a webhook is deleted, then it is gone (404 after), audited', async () => {
  const made = await create({ endpoint_url: PUBLIC_URL, secret: SECRET });
  expect((await app.request('DELETE', `/webhooks/${made.body.id}`, { token: admin })).status).toBe(204);
  expect((await app.request('GET', `/webhooks/${made.body.id}`, { token: admin })).status).toBe(404);
  expect((await app.request('DELETE', `/webhooks/${made.body.id}`, { token: admin })).status).toBe(404);
  const [row] = await sql<{ n: string }>(
    app,
    "select count(*) as n from audit_entries where action = 'webhook.deleted' and entity_id = ?",
    [made.body.id],
  );
  expect(Number(row!.n)).toBe(1);
});

test('when a staff user lacks manage_webhooks, then every webhook route is 403', async () => {
  const clerk = await createStaff(app, ['view_groups'], admin);
  expect((await create({ endpoint_url: PUBLIC_URL, secret: SECRET }, clerk.token)).status).toBe(403);
  expect((await app.request('GET', '/webhooks', { token: clerk.token })).status).toBe(403);
  const list = await app.request('GET', '/webhooks?page_size=2', { token: admin });
  expect(list.status).toBe(200);
  expect(list.body.items.length).toBe(2);
  expect(list.body.total).toBeGreaterThanOrEqual(3);
});

test('when a test event is asked of an inactive webhook, then 409; of an active one, 202 and one webhook.test event', async () => {
  const made = await create({ endpoint_url: PUBLIC_URL, secret: SECRET, is_active: false });
  expect((await app.request('POST', `/webhooks/${made.body.id}/test`, { token: admin })).status).toBe(409);
  await app.request('PATCH', `/webhooks/${made.body.id}`, { token: admin, body: { is_active: true } });
  const res = await app.request('POST', `/webhooks/${made.body.id}/test`, { token: admin });
  expect(res.status).toBe(202);
  const [event] = await sql<{ type: string; data: { webhook_id: string } }>(
    app,
    'select type, data from domain_events where id = ?',
    [res.body.event_id],
  );
  expect(event).toMatchObject({ type: 'webhook.test', data: { webhook_id: made.body.id } });
});
