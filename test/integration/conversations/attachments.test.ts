import type { EntityManager } from '@mikro-orm/postgresql';
import { removeExpiredRows } from '../../../src/domain/retention/retention';
import { resealAll, SECRET_PURPOSES } from '../../../src/domain/secrets/sealed-columns';
import { DataKeyRing } from '../../../src/platform/secret-box';
import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, type TestApp, type TestResponse } from '../../helpers/test-app';
import { BOUNDARY, FILES, multipart } from '../compliance/compliance-kit';
import { dataKey } from '../secrets/secrets-kit';

/**
 * Conversation attachments: uploaded under the document file rules, sealed at rest (and moved
 * by the re-seal), taken once by a message of their owner, shown on the message, downloaded by
 * their customer and by staff in scope with the type read from the content, and deleted by the
 * retention sweep when no message took them within a day. Also the queue's team filter.
 */
jest.setTimeout(120_000);

const K1 = dataKey('k1');
let app: TestApp;
let admin: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'conv-attachments', env: { DATA_ENCRYPTION_KEYS: K1.pair } });
  admin = await adminToken(app);
});
afterAll(() => app?.stop());

async function postFile(path: string, token: string, body: Buffer): Promise<TestResponse> {
  const res = await fetch(`${app.baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    body: new Uint8Array(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
}

const filePart = (data: Buffer, filename = 'scan.pdf') => multipart([{ name: 'file', filename, contentType: 'text/html', data }]);

async function uploadAs(customer: LoggedIn, data: Buffer, filename?: string): Promise<any> {
  const res = await postFile('/customers/me/attachments', customer.token, filePart(data, filename));
  expect(res.status).toBe(201);
  return res.body;
}

async function fetchFile(path: string, token: string): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(`${app.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

async function conversationOf(customer: LoggedIn): Promise<string> {
  const res = await app.request('POST', '/customers/me/conversations', {
    token: customer.token,
    body: { subject: 'Proof of payment', body: 'Sending the receipt' },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

function reply(customer: LoggedIn, conversationId: string, attachmentIds: string[]): Promise<TestResponse> {
  return app.request('POST', `/customers/me/conversations/${conversationId}/messages`, {
    token: customer.token,
    body: { body: 'Attached', attachment_ids: attachmentIds },
  });
}

test('when a customer uploads a PNG named .html and sends it, then the message shows it and both sides download it as image/png', async () => {
  const customer = await createCustomer(app, admin);
  const bytes = FILES.png();
  const uploaded = await uploadAs(customer, bytes, 'receipt.html');
  expect(uploaded).toEqual({
    id: expect.any(String),
    file_name: 'receipt.html',
    content_type: 'image/png',
    size: bytes.length,
    created_at: expect.any(String),
  });
  const conversationId = await conversationOf(customer);
  const sent = await reply(customer, conversationId, [uploaded.id]);
  expect(sent.status).toBe(201);
  expect(sent.body).toMatchObject({ attachment_ids: [uploaded.id], attachments: [uploaded] });

  const mine = await app.request('GET', `/customers/me/conversations/${conversationId}`, { token: customer.token });
  expect(mine.body.messages[1]).toMatchObject({ attachment_ids: [uploaded.id], attachments: [uploaded] });
  const staffView = await app.request('GET', `/api/crm/conversations/${conversationId}`, { token: admin });
  expect(staffView.body.messages[1].attachments).toEqual([uploaded]);

  for (const [path, token] of [
    [`/customers/me/attachments/${uploaded.id}`, customer.token],
    [`/api/crm/conversations/${conversationId}/attachments/${uploaded.id}`, admin],
  ] as const) {
    const file = await fetchFile(path, token);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    expect(file.headers.get('content-disposition')!.replace(/"/g, '')).toBe('attachment; filename=receipt.png');
    expect(file.bytes.equals(bytes)).toBe(true);
  }
  const audits = await sql(
    app,
    `select action from audit_entries where action = 'conversation.attachment_downloaded' and entity_id = ?`,
    [conversationId],
  );
  expect(audits).toHaveLength(1);
  // Stored sealed: the bytes at rest are not the file.
  const [row] = await sql<{ content: Buffer; key_id: string }>(
    app,
    'select content, key_id from conversation_attachment_files where attachment_id = ?',
    [uploaded.id],
  );
  expect(row!.key_id).toBe('k1');
  expect(row!.content.includes(bytes.subarray(16, 64))).toBe(false);
});

test("when a message names another customer's attachment or one already sent, then 422 at that id and nothing is kept", async () => {
  const owner = await createCustomer(app, admin);
  const stranger = await createCustomer(app, admin);
  const theirs = await uploadAs(stranger, FILES.pdf());
  const mine = await uploadAs(owner, FILES.pdf());
  const conversationId = await conversationOf(owner);

  const foreign = await reply(owner, conversationId, [mine.id, theirs.id]);
  expect(foreign.status).toBe(422);
  expect(foreign.body.detail[0].loc).toEqual(['body', 'attachment_ids', 1]);
  // The refused message took nothing: the caller's own file is still free.
  expect((await reply(owner, conversationId, [mine.id])).status).toBe(201);
  const again = await reply(owner, conversationId, [mine.id]);
  expect(again.status).toBe(422);
  expect(again.body.detail[0].loc).toEqual(['body', 'attachment_ids', 0]);
  expect(await sql(app, 'select 1 from conversation_messages where conversation_id = ?', [conversationId])).toHaveLength(2);
  // Another customer's file is not downloadable by id either.
  expect((await fetchFile(`/customers/me/attachments/${theirs.id}`, owner.token)).status).toBe(404);
  expect((await fetchFile(`/api/crm/conversations/${conversationId}/attachments/${theirs.id}`, admin)).status).toBe(404);
});

test('when an upload is not a PDF, JPEG or PNG, or passes 10 MiB, then 422 at file or 413, and nothing is kept', async () => {
  const customer = await createCustomer(app, admin);
  const before = await sql(app, 'select 1 from conversation_attachments where customer_id = ?', [customer.id]);
  const text = await postFile('/customers/me/attachments', customer.token, filePart(Buffer.from('<html>hello</html>'), 'a.pdf'));
  expect(text.status).toBe(422);
  expect(text.body.detail[0].loc).toEqual(['body', 'file']);
  const big = Buffer.concat([FILES.pdf(), Buffer.alloc(10 * 1024 * 1024)]);
  const tooBig = await postFile('/customers/me/attachments', customer.token, filePart(big));
  expect(tooBig.status).toBe(413);
  expect(tooBig.body.code).toBe('PAYLOAD_TOO_LARGE');
  expect(await sql(app, 'select 1 from conversation_attachments where customer_id = ?', [customer.id])).toEqual(before);
});

test('when staff send a file in a public answer and another in an internal note, then the customer downloads only the first', async () => {
  const customer = await createCustomer(app, admin);
  const conversationId = await conversationOf(customer);
  const upload = async () => {
    const res = await postFile(`/api/crm/conversations/${conversationId}/attachments`, admin, filePart(FILES.jpeg(), 'form.jpg'));
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const shared = await upload();
  const secret = await upload();
  const uploads = await sql(
    app,
    `select 1 from audit_entries where action = 'conversation.attachment_uploaded' and entity_id = ?`,
    [conversationId],
  );
  expect(uploads).toHaveLength(2);
  // A file the desk has not sent yet is not the customer's to send.
  expect((await reply(customer, conversationId, [shared])).status).toBe(422);
  const answer = await app.request('POST', `/api/crm/conversations/${conversationId}/messages`, {
    token: admin,
    body: { body: 'Please fill this in', attachment_ids: [shared] },
  });
  expect(answer.status).toBe(201);
  expect(answer.body.attachments).toEqual([expect.objectContaining({ id: shared, content_type: 'image/jpeg' })]);
  const note = await app.request('POST', `/api/crm/conversations/${conversationId}/messages`, {
    token: admin,
    body: { body: 'Internal copy', internal: true, attachment_ids: [secret] },
  });
  expect(note.status).toBe(201);
  expect((await fetchFile(`/customers/me/attachments/${shared}`, customer.token)).status).toBe(200);
  expect((await fetchFile(`/customers/me/attachments/${secret}`, customer.token)).status).toBe(404);
});

test('when staff outside the scope ask for a conversation file, then 404', async () => {
  const customer = await createCustomer(app, admin);
  const file = await uploadAs(customer, FILES.pdf());
  const conversationId = await conversationOf(customer);
  expect((await reply(customer, conversationId, [file.id])).status).toBe(201);
  const agent = await createStaff(app, ['view_conversations', 'reply_conversations'], admin);
  expect((await app.request('PATCH', `/api/admin/users/${agent.id}`, { token: admin, body: { data_scope: 'own' } })).status).toBe(
    200,
  );
  expect((await fetchFile(`/api/crm/conversations/${conversationId}/attachments/${file.id}`, agent.token)).status).toBe(404);
  const upload = await postFile(`/api/crm/conversations/${conversationId}/attachments`, agent.token, filePart(FILES.pdf()));
  expect(upload.status).toBe(404);
});

test('when a free attachment is older than a day, then the retention sweep deletes it with its file and keeps sent ones', async () => {
  const customer = await createCustomer(app, admin);
  const free = await uploadAs(customer, FILES.pdf());
  const sent = await uploadAs(customer, FILES.pdf());
  const fresh = await uploadAs(customer, FILES.pdf());
  expect((await reply(customer, await conversationOf(customer), [sent.id])).status).toBe(201);
  await sql(app, `update conversation_attachments set created_at = now() - interval '25 hours' where id in (?, ?)`, [
    free.id,
    sent.id,
  ]);
  const em = app.runtime.services.orm.em.fork() as EntityManager;
  const ages = { outboxHours: 720, inboxHours: 168, webhookDeliveryHours: 720, mailHours: 720, reportDays: 7 };
  const outcome = await removeExpiredRows(em, ages, { batchSize: 100, budgetMs: 30_000 });
  expect(outcome.attachments).toBeGreaterThanOrEqual(1);
  const left = await sql<{ id: string }>(app, 'select id from conversation_attachments where customer_id = ? order by id', [
    customer.id,
  ]);
  expect(left.map((r) => r.id).sort()).toEqual([sent.id, fresh.id].sort());
  expect(await sql(app, 'select 1 from conversation_attachment_files where attachment_id = ?', [free.id])).toEqual([]);
});

test('when the keys rotate and the re-seal runs, then attachment files move to the new key and still open', async () => {
  const customer = await createCustomer(app, admin);
  const bytes = FILES.png();
  const file = await uploadAs(customer, bytes);
  const K2 = dataKey('k2');
  const ring = new DataKeyRing([K2, K1], undefined, () => undefined);
  const boxes = Object.fromEntries(Object.values(SECRET_PURPOSES).map((p) => [p, ring.box(p)])) as Parameters<
    typeof resealAll
  >[1];
  const outcome = await resealAll(app.runtime.services.orm.em.fork() as EntityManager, boxes);
  expect(outcome.failed).toBe(0);
  expect(outcome.moved['conversation_attachment_files.content']).toBeGreaterThanOrEqual(1);
  expect(outcome.sealed_by_key.k1 ?? 0).toBe(0);
  const [row] = await sql<{ key_id: string; content: Buffer }>(
    app,
    'select key_id, content from conversation_attachment_files where attachment_id = ?',
    [file.id],
  );
  expect(row!.key_id).toBe('k2');
  const onlyNew = new DataKeyRing([K2], undefined, () => undefined).box(SECRET_PURPOSES.document);
  expect((await onlyNew.openBytes(row!.content, 'k2', file.id, 'test')).equals(bytes)).toBe(true);
});

test('when the queue is filtered by team_id, then only conversations of that team’s customers are listed, within scope', async () => {
  const team = async (name: string) =>
    (await app.request('POST', '/api/admin/teams', { token: admin, body: { name: `${name}-${Date.now()}` } })).body.id as string;
  const east = await team('east');
  const west = await team('west');
  const eastCustomer = await createCustomer(app, admin);
  const westCustomer = await createCustomer(app, admin);
  for (const [c, t] of [
    [eastCustomer, east],
    [westCustomer, west],
  ] as const)
    expect((await app.request('POST', `/api/crm/customers/${c.id}/assign`, { token: admin, body: { team_id: t } })).status).toBe(
      200,
    );
  const eastConversation = await conversationOf(eastCustomer);
  const westConversation = await conversationOf(westCustomer);

  const listed = await app.request('GET', `/api/crm/conversations?team_id=${east}`, { token: admin });
  expect(listed.status).toBe(200);
  expect(listed.body.items.map((c: any) => c.id)).toEqual([eastConversation]);

  const agent = await createStaff(app, ['view_conversations'], admin);
  expect(
    (await app.request('PUT', `/api/admin/teams/${east}/members/${agent.id}`, { token: admin, body: { role: 'member' } })).status,
  ).toBe(200);
  expect(
    (await app.request('PATCH', `/api/admin/users/${agent.id}`, { token: admin, body: { data_scope: 'team' } })).status,
  ).toBe(200);
  const outside = await app.request('GET', `/api/crm/conversations?team_id=${west}`, { token: agent.token });
  expect(outside.body.items).toEqual([]);
  const own = await app.request('GET', `/api/crm/conversations?team_id=${east}`, { token: agent.token });
  expect(own.body.items.map((c: any) => c.id)).toEqual([eastConversation]);
  expect(westConversation).not.toBe(eastConversation);
  const bad = await app.request('GET', '/api/crm/conversations?team_id=nope', { token: admin });
  expect(bad.status).toBe(422);
});
