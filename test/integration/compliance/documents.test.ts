import { randomUUID } from 'node:crypto';
import { DataKeyRing } from '../../../src/platform/secret-box';
import { resealAll, SECRET_PURPOSES } from '../../../src/domain/secrets/sealed-columns';
import type { EntityManager } from '@mikro-orm/postgresql';
import { adminToken, createCustomer, createStaff, loginCustomer, type LoggedIn } from '../../helpers/identity';
import { decodedMessage } from '../../helpers/mail';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { dataKey } from '../secrets/secrets-kit';
import { eventsOf, expect422, expectError, expectOk } from '../trading/trading-kit';
import { download, FILES, multipart, postMultipart, setLevelTerms, upload } from './compliance-kit';

/**
 * Documents: a customer submits a PDF, JPEG or PNG as multipart, recognised
 * by its content; it is sealed at rest under DATA_ENCRYPTION_KEYS; staff with manage_compliance
 * list, download (audited), approve and reject it; the customer is told in its locale and rises
 * to the level its approved documents reach. Every bad upload is a 4xx that keeps nothing.
 */
jest.setTimeout(90_000);

const K1 = dataKey('k1');
let smtp: SmtpSink;
let app: TestApp;
let admin: string;
let officer: LoggedIn;

beforeAll(async () => {
  smtp = await startSmtpSink();
  app = await startTestApp({
    label: 'documents',
    env: { SMTP_URL: smtp.url, OUTBOX_RELAY_INTERVAL_MS: '200', DATA_ENCRYPTION_KEYS: K1.pair },
  });
  admin = await adminToken(app);
  officer = await createStaff(app, ['manage_compliance', 'view_customers'], admin);
});
afterAll(async () => {
  await app?.stop();
  await smtp?.close();
});

async function stored(): Promise<{ documents: number; files: number }> {
  const [row] = await sql<{ documents: number; files: number }>(
    app,
    `select (select count(*) from customer_documents)::int as documents, (select count(*) from customer_document_files)::int as files`,
  );
  return row!;
}

async function germanCustomer(): Promise<LoggedIn> {
  const email = `kunde-${randomUUID().slice(0, 8)}@broker.test`;
  const password = 'Harbour-violet-candle-41';
  const created = await app.request('POST', '/api/crm/customers', {
    token: admin,
    body: { email, password, first_name: 'Greta', last_name: 'Berg', locale: 'de' },
  });
  const pair = await loginCustomer(app, email, password);
  return { id: created.body.id, email, password, token: pair.access_token, refreshToken: pair.refresh_token };
}

describe('a customer submitting a document', () => {
  test('when a PDF, a JPEG and a PNG are sent under misleading names, then each is recognised by its content and listed without its bytes', async () => {
    const customer = await createCustomer(app, admin);
    const pdf = expectOk(await upload(app, customer.token, 'identity', FILES.pdf(), 'passport.png', 'image/png'), 201);
    expect(Object.keys(pdf).sort()).toEqual([
      'content_type',
      'created_at',
      'file_name',
      'id',
      'reason',
      'size',
      'status',
      'type',
    ]);
    expect(pdf).toMatchObject({
      type: 'identity',
      status: 'pending',
      file_name: 'passport.png',
      content_type: 'application/pdf',
      reason: null,
    });
    const jpeg = expectOk(await upload(app, customer.token, 'selfie', FILES.jpeg(), 'me.pdf'), 201);
    expect(jpeg.content_type).toBe('image/jpeg');
    const png = FILES.png();
    const shot = expectOk(await upload(app, customer.token, 'address', png, '../../etc/bill.txt', 'text/plain'), 201);
    expect(shot).toMatchObject({ content_type: 'image/png', file_name: 'bill.txt', size: png.length });

    const list = expectOk(await app.request('GET', '/customers/me/documents', { token: customer.token }), 200);
    expect(list.items.map((d: { id: string }) => d.id)).toEqual([shot.id, jpeg.id, pdf.id]);
    expect(list).toMatchObject({ page: 1, page_size: 20, total: 3 });
    const paged = expectOk(
      await app.request('GET', '/customers/me/documents?page=2&page_size=2', { token: customer.token }),
      200,
    );
    expect(paged).toMatchObject({ items: [expect.objectContaining({ id: pdf.id })], page: 2, page_size: 2, total: 3 });
    // There is no customer route to a file, and the staff route refuses a customer token.
    expect((await download(app, customer.token, pdf.id)).status).toBe(403);
    expect((await app.request('GET', `/customers/me/documents/${pdf.id}/file`, { token: customer.token })).status).toBe(404);
    expect(await eventsOf(app, 'document.submitted', pdf.id)).toHaveLength(1);
  });

  test('when a file is stored, then only its AES-256-GCM ciphertext under the current key id is in Postgres, and staff get the exact bytes back, audited', async () => {
    const customer = await createCustomer(app, admin);
    const bytes = FILES.pdf();
    const doc = expectOk(await upload(app, customer.token, 'identity', bytes), 201);
    const [row] = await sql<{ key_id: string; content: Buffer }>(
      app,
      'select key_id, content from customer_document_files where document_id = ?',
      [doc.id],
    );
    expect(row!.key_id).toBe('k1');
    expect(row!.content.length).toBe(bytes.length + 12 + 16);
    expect(row!.content.includes(bytes.subarray(0, 24))).toBe(false);

    const got = await download(app, officer.token, doc.id);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/pdf');
    expect(got.headers.get('content-disposition')).toMatch(/^attachment; filename="?scan\.pdf"?$/);
    expect(got.bytes.equals(bytes)).toBe(true);
    const audit = expectOk(
      await app.request('GET', `/api/admin/audit?entity_type=document&entity_id=${doc.id}`, { token: admin }),
      200,
    );
    expect(audit.items).toEqual([expect.objectContaining({ action: 'document.downloaded', actor_id: officer.id })]);

    // A sealed file copied onto another document's row does not open there (bound to its id).
    const other = expectOk(await upload(app, customer.token, 'address', FILES.pdf()), 201);
    await sql(app, 'update customer_document_files set content = ? where document_id = ?', [row!.content, other.id]);
    const refused = await download(app, officer.token, other.id);
    expect(refused.status).toBe(500);
    expect(app.logs.some((l) => l.msg === 'a sealed secret could not be unsealed' && String(l.subject).includes(other.id))).toBe(
      true,
    );
    // Gone again, so the re-seal below does not fail on it (as it must on a value it cannot open).
    await sql(app, 'delete from customer_documents where id = ?', [other.id]);
  });

  test('when a PNG with HTML appended is uploaded as x.html, then it downloads as image/png named x.png; the name is kept as metadata', async () => {
    const customer = await createCustomer(app, admin);
    const bytes = Buffer.concat([FILES.png(), Buffer.from('<html><script>alert(document.cookie)</script></html>')]);
    const doc = expectOk(await upload(app, customer.token, 'identity', bytes, 'x.html', 'text/html'), 201);
    expect(doc).toMatchObject({ file_name: 'x.html', content_type: 'image/png' });
    const got = await download(app, officer.token, doc.id);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('image/png');
    expect(got.headers.get('content-disposition')).toMatch(/^attachment; filename="?x\.png"?$/);
    expect(got.bytes.equals(bytes)).toBe(true);
    for (const [name, kind, file, expected] of [
      ['statement.pdf.exe', 'application/pdf', FILES.pdf(), 'statement.pdf.pdf'],
      ['.htaccess', 'image/jpeg', FILES.jpeg(), 'document.jpg'],
      ['selfie', 'image/jpeg', FILES.jpeg(), 'selfie.jpg'],
    ] as const) {
      const other = expectOk(await upload(app, customer.token, 'selfie', file, name, 'application/octet-stream'), 201);
      const res = await download(app, officer.token, other.id);
      const disposition = res.headers.get('content-disposition')!.replace(/"/g, '');
      expect([name, res.headers.get('content-type'), disposition]).toEqual([name, kind, `attachment; filename=${expected}`]);
    }
  });

  test('when the keys rotate and the re-seal runs, then document files move to the new key and still open', async () => {
    const customer = await createCustomer(app, admin);
    const bytes = FILES.png();
    const doc = expectOk(await upload(app, customer.token, 'selfie', bytes, 'me.png', 'image/png'), 201);
    const K2 = dataKey('k2');
    const ring = new DataKeyRing([K2, K1], undefined, () => undefined);
    const boxes = Object.fromEntries(Object.values(SECRET_PURPOSES).map((p) => [p, ring.box(p)])) as Parameters<
      typeof resealAll
    >[1];
    const outcome = await resealAll(app.runtime.services.orm.em.fork() as EntityManager, boxes);
    expect(outcome.failed).toBe(0);
    expect(outcome.moved['customer_document_files.content']).toBeGreaterThanOrEqual(1);
    expect(outcome.sealed_by_key.k1 ?? 0).toBe(0);
    const [row] = await sql<{ key_id: string; content: Buffer }>(
      app,
      'select key_id, content from customer_document_files where document_id = ?',
      [doc.id],
    );
    expect(row!.key_id).toBe('k2');
    const onlyNew = new DataKeyRing([K2], undefined, () => undefined).box(SECRET_PURPOSES.document);
    expect((await onlyNew.openBytes(row!.content, 'k2', doc.id, 'test')).equals(bytes)).toBe(true);
  });
});

describe('a bad upload', () => {
  let customer: LoggedIn;
  beforeAll(async () => {
    customer = await createCustomer(app, admin);
  });

  const file = (data = FILES.pdf(), name = 'file') => ({ name, filename: 'scan.pdf', contentType: 'application/pdf', data });
  const cases: Array<[string, () => Buffer, number, (string | number)[] | string]> = [
    ['the type part is missing', () => multipart([file()]), 422, ['body', 'type']],
    ['the file part is missing', () => multipart([{ name: 'type', value: 'identity' }]), 422, ['body', 'file']],
    ['two files are sent', () => multipart([{ name: 'type', value: 'identity' }, file(), file()]), 422, ['body', 'file']],
    ['the type is unknown', () => multipart([{ name: 'type', value: 'passport' }, file()]), 422, ['body', 'type']],
    [
      'an unknown field is sent',
      () => multipart([{ name: 'type', value: 'identity' }, { name: 'note', value: 'x' }, file()]),
      422,
      ['body', 'note'],
    ],
    [
      'a file comes under another name',
      () => multipart([{ name: 'type', value: 'identity' }, file(FILES.pdf(), 'scan')]),
      422,
      ['body', 'scan'],
    ],
    [
      'the body ends before its closing boundary',
      () => multipart([{ name: 'type', value: 'identity' }, file()], { close: false }),
      422,
      ['body'],
    ],
    [
      'the body is cut off inside the file',
      () => multipart([{ name: 'type', value: 'identity' }, file()]).subarray(0, 250),
      422,
      ['body'],
    ],
    [
      'a file claims to be a PNG but is text',
      () =>
        multipart([
          { name: 'type', value: 'identity' },
          { name: 'file', filename: 'id.png', contentType: 'image/png', data: Buffer.from('just some text, not an image') },
        ]),
      422,
      ['body', 'file'],
    ],
    [
      'a file copies the PNG signature without an image header',
      () =>
        multipart([
          { name: 'type', value: 'identity' },
          {
            name: 'file',
            filename: 'id.png',
            contentType: 'image/png',
            data: Buffer.concat([FILES.png().subarray(0, 8), Buffer.from('<script>alert(1)</script>')]),
          },
        ]),
      422,
      ['body', 'file'],
    ],
    ['the file is empty', () => multipart([{ name: 'type', value: 'identity' }, file(Buffer.alloc(0))]), 422, ['body', 'file']],
    [
      'the file is one byte over 10 MiB',
      () =>
        multipart([
          { name: 'type', value: 'identity' },
          file(Buffer.concat([FILES.pdf(), Buffer.alloc(10 * 1024 * 1024 + 1 - FILES.pdf().length)])),
        ]),
      413,
      'PAYLOAD_TOO_LARGE',
    ],
    [
      'the body announces 12 MiB',
      () => multipart([{ name: 'type', value: 'identity' }, file(Buffer.concat([FILES.pdf(), Buffer.alloc(12 * 1024 * 1024)]))]),
      413,
      'PAYLOAD_TOO_LARGE',
    ],
  ];

  test.each(cases)('when %s, then it is a clear 4xx and nothing is kept', async (_what, body, status, where) => {
    const before = await stored();
    const res = await postMultipart(app, customer.token, body());
    if (typeof where === 'string') expectError(res, status, where);
    else expect422(res, where);
    expect(await stored()).toEqual(before);
    // The connection still serves the next request.
    expect((await app.request('GET', '/customers/me/documents', { token: customer.token })).status).toBe(200);
  });

  test('when the body is JSON, or multipart without a boundary, then it is 415 or 422 and nothing is kept', async () => {
    const before = await stored();
    const json = await app.request('POST', '/customers/me/documents', { token: customer.token, body: { type: 'identity' } });
    expectError(json, 415, 'UNSUPPORTED_MEDIA_TYPE');
    const noBoundary = await postMultipart(app, customer.token, multipart([file()]), 'multipart/form-data; charset=utf-8');
    expect(noBoundary.status).toBe(422);
    expect(await stored()).toEqual(before);
  });

  test('when a 10 MiB file exactly is sent, then it is accepted', async () => {
    const pdf = FILES.pdf();
    const data = Buffer.concat([pdf, Buffer.alloc(10 * 1024 * 1024 - pdf.length)]);
    const res = await postMultipart(app, customer.token, multipart([{ name: 'type', value: 'identity' }, file(data)]));
    expect(expectOk(res, 201).size).toBe(10 * 1024 * 1024);
  });
});

describe('staff review', () => {
  afterEach(async () => {
    for (const level of [1, 2, 3]) await setLevelTerms(app, admin, level, {});
  });

  test('when staff without manage_compliance ask, then every review route is 403', async () => {
    const clerk = await createStaff(app, ['view_customers', 'manage_customers'], admin);
    const customer = await createCustomer(app, admin);
    const doc = expectOk(await upload(app, customer.token, 'identity', FILES.pdf()), 201);
    expectError(
      await app.request('GET', `/api/crm/customers/${customer.id}/documents`, { token: clerk.token }),
      403,
      'FORBIDDEN',
    );
    expect((await download(app, clerk.token, doc.id)).status).toBe(403);
    expectError(await app.request('POST', `/api/crm/documents/${doc.id}/approve`, { token: clerk.token }), 403, 'FORBIDDEN');
    expectError(
      await app.request('PATCH', `/api/crm/customers/${customer.id}`, { token: clerk.token, body: { verification_level: 2 } }),
      403,
      'FORBIDDEN',
    );
  });

  test('when a document is rejected, then it is audited, 409 DOCUMENT_NOT_PENDING after, and the customer is notified and mailed in German', async () => {
    const customer = await germanCustomer();
    const doc = expectOk(await upload(app, customer.token, 'address', FILES.jpeg(), 'rechnung.jpg', 'image/jpeg'), 201);
    const listed = expectOk(
      await app.request('GET', `/api/crm/customers/${customer.id}/documents`, { token: officer.token }),
      200,
    );
    expect(listed.items).toEqual([
      expect.objectContaining({ id: doc.id, customer_id: customer.id, decided_at: null, decided_by: null }),
    ]);

    const rejected = expectOk(
      await app.request('POST', `/api/crm/documents/${doc.id}/reject`, {
        token: officer.token,
        body: { reason: 'Die Rechnung ist zu alt' },
      }),
      200,
    );
    expect(rejected).toMatchObject({
      status: 'rejected',
      reason: 'Die Rechnung ist zu alt',
      decided_by: officer.id,
    });
    expectError(
      await app.request('POST', `/api/crm/documents/${doc.id}/approve`, { token: officer.token }),
      409,
      'DOCUMENT_NOT_PENDING',
    );
    expectError(
      await app.request('POST', `/api/crm/documents/${doc.id}/reject`, { token: officer.token, body: { reason: 'again' } }),
      409,
      'DOCUMENT_NOT_PENDING',
    );
    expect422(await app.request('POST', `/api/crm/documents/${doc.id}/reject`, { token: officer.token, body: {} }), [
      'body',
      'reason',
    ]);

    const audit = expectOk(
      await app.request('GET', `/api/admin/audit?entity_type=document&entity_id=${doc.id}`, { token: admin }),
      200,
    );
    expect(audit.items.map((a: { action: string }) => a.action)).toEqual(['document.rejected']);
    const note = await waitFor('the rejection notification', async () => {
      const res = await app.request('GET', '/customers/me/notifications', { token: customer.token });
      return res.body.items.find((n: { type: string }) => n.type === 'document.rejected');
    });
    expect(note.data).toMatchObject({ id: doc.id, status: 'rejected', reason: 'Die Rechnung ist zu alt' });
    expect(note.data.decided_by).toBeUndefined();
    const mail = await waitFor('the German mail', async () => smtp.received.find((m) => m.to.includes(customer.email)));
    expect(decodedMessage(mail.raw)).toContain('wurde abgelehnt: Die Rechnung ist zu alt');
    // The type is named in German, in the mail and the notification, never by its key.
    expect(decodedMessage(mail.raw)).toContain('rechnung.jpg (Wohnsitznachweis)');
    expect(decodedMessage(mail.raw)).not.toMatch(/\(address\)/);
    expect(note.body).toContain('(Wohnsitznachweis)');
  });

  test('when the documents a level requires are approved, then the customer rises to the highest such level, with customer.verified, a notification and a mail', async () => {
    await setLevelTerms(app, admin, 1, { required_documents: ['identity'] });
    await setLevelTerms(app, admin, 2, { required_documents: ['identity', 'address'] });
    await setLevelTerms(app, admin, 3, { required_documents: ['identity', 'address', 'selfie', 'payment_method'] });
    const customer = await createCustomer(app, admin);
    const id = expectOk(await upload(app, customer.token, 'identity', FILES.pdf()), 201);
    const address = expectOk(await upload(app, customer.token, 'address', FILES.pdf()), 201);
    expect(expectOk(await app.request('GET', '/customers/me', { token: customer.token }), 200).verification_level).toBe(0);

    // Approved at once: the customer's row lock makes the second count the first.
    const [a, b] = await Promise.all([
      app.request('POST', `/api/crm/documents/${id.id}/approve`, { token: officer.token }),
      app.request('POST', `/api/crm/documents/${address.id}/approve`, { token: admin }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const profile = expectOk(await app.request('GET', `/api/crm/customers/${customer.id}`, { token: admin }), 200);
    expect(profile.verification_level).toBe(2);
    expect(expectOk(await app.request('GET', '/api/customer/me', { token: customer.token }), 200).verification_level).toBe(2);

    const verified = await eventsOf(app, 'customer.verified', customer.id);
    // The approvals take turns, so the second counts the first: identity first reaches level 1
    // and then 2; address first reaches nothing and then 2. Either way the last rise is to 2.
    const rises = verified.map((e) => e.data);
    expect(rises.at(-1)).toEqual({
      customer_id: customer.id,
      verification_level: 2,
      previous_level: rises.length === 2 ? 1 : 0,
      source: 'documents',
    });
    expect(rises.length).toBeLessThanOrEqual(2);
    await waitFor('the verified notification', async () => {
      const res = await app.request('GET', '/customers/me/notifications', { token: customer.token });
      return res.body.items.find(
        (n: { type: string; data: { verification_level?: number } }) =>
          n.type === 'customer.verified' && n.data.verification_level === 2,
      );
    });
    await waitFor('the verified mail', async () =>
      smtp.received.find((m) => m.to.includes(customer.email) && decodedMessage(m.raw).includes('verified to level 2')),
    );
  });

  test('when no level requires documents (the defaults), then an approval lifts nobody', async () => {
    const customer = await createCustomer(app, admin);
    const doc = expectOk(await upload(app, customer.token, 'identity', FILES.pdf()), 201);
    expectOk(await app.request('POST', `/api/crm/documents/${doc.id}/approve`, { token: officer.token }), 200);
    expect(expectOk(await app.request('GET', '/customers/me', { token: customer.token }), 200).verification_level).toBe(0);
    expect(await eventsOf(app, 'customer.verified', customer.id)).toHaveLength(0);
  });

  test('when staff set the level, then it is audited and a rise is customer.verified; a bad level is 422', async () => {
    const customer = await createCustomer(app, admin);
    const up = expectOk(
      await app.request('PATCH', `/api/crm/customers/${customer.id}`, { token: admin, body: { verification_level: 3 } }),
      200,
    );
    expect(up.verification_level).toBe(3);
    expectOk(
      await app.request('PATCH', `/api/crm/customers/${customer.id}`, { token: admin, body: { verification_level: 1 } }),
      200,
    );
    expect422(
      await app.request('PATCH', `/api/crm/customers/${customer.id}`, { token: admin, body: { verification_level: 4 } }),
      ['body', 'verification_level'],
    );
    expectError(
      await app.request('PATCH', `/api/crm/customers/${randomUUID()}`, { token: admin, body: { verification_level: 1 } }),
      404,
      'NOT_FOUND',
    );
    const audit = expectOk(
      await app.request('GET', `/api/admin/audit?entity_type=customer&entity_id=${customer.id}`, { token: admin }),
      200,
    );
    expect(
      audit.items
        .filter((a: { action: string }) => a.action === 'customer.verification_level_changed')
        .map((a: { after: unknown }) => a.after),
    ).toEqual(
      expect.arrayContaining([
        { verification_level: 3, source: 'staff' },
        { verification_level: 1, source: 'staff' },
      ]),
    );
    expect((await eventsOf(app, 'customer.verified', customer.id)).map((e) => e.data.verification_level)).toEqual([3]);
  });
});
