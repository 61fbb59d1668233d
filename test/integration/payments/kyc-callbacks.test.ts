import { randomBytes, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { adminToken, createCustomer, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, type TestApp, type TestResponse } from '../../helpers/test-app';
import { FILES, setLevelTerms, upload } from '../compliance/compliance-kit';
import { expectError, expectOk } from '../trading/trading-kit';
import { inboundOutcomes, newSecret } from './payments-kit';

/**
 * A KYC provider's review callbacks: signed as payment callbacks are, logged and deduplicated
 * in the inbound log, and applied as the compliance desk's approve or reject, audited under
 * the integration's own name.
 */
jest.setTimeout(120_000);

let app: TestApp;
let admin: string;
let kyc: { id: string; secret: string };

beforeAll(async () => {
  app = await startTestApp({ label: 'kyc-callbacks' });
  admin = await adminToken(app);
  await setLevelTerms(app, admin, 1, { required_documents: ['identity'] });
  kyc = await createKyc();
});
afterAll(() => app?.stop());

async function createKyc(config: Record<string, unknown> = {}): Promise<{ id: string; secret: string }> {
  const secret = newSecret();
  const body = expectOk(
    await app.request('POST', '/api/admin/integrations', {
      token: admin,
      body: {
        kind: 'kyc',
        adapter: 'sumsub_like',
        name: `KYC ${randomBytes(3).toString('hex')}`,
        config,
        secrets: { callback_secret: secret },
      },
    }),
    201,
  );
  return { id: body.id, secret };
}

function sendReview(
  body: Record<string, unknown>,
  secret = kyc.secret,
  integrationId = kyc.id,
  msgId = `msg_${randomUUID()}`,
): Promise<TestResponse> {
  const raw = JSON.stringify(body);
  const at = new Date();
  return app.request('POST', `/api/integrations/kyc/${integrationId}/callbacks`, {
    rawBody: raw,
    headers: {
      'content-type': 'application/json',
      'webhook-id': msgId,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(msgId, at, raw),
    },
  });
}

const review = (customer: LoggedIn, answer: 'GREEN' | 'RED', extra: Record<string, unknown> = {}) => ({
  type: 'applicantReviewed',
  external_id: `rev-${randomUUID()}`,
  applicantId: randomBytes(12).toString('hex'),
  externalUserId: customer.id,
  reviewResult: { reviewAnswer: answer, ...(answer === 'RED' ? { rejectLabels: ['DOCUMENT_DAMAGED'] } : {}) },
  ...extra,
});

async function pendingDocument(customer: LoggedIn): Promise<string> {
  return expectOk(await upload(app, customer.token, 'identity', FILES.pdf()), 201).id;
}

async function documentOf(customer: LoggedIn, id: string) {
  const page = expectOk(await app.request('GET', '/customers/me/documents', { token: customer.token }), 200);
  return page.items.find((d: { id: string }) => d.id === id);
}

test('when a signed GREEN review arrives, then the pending document is approved, the customer rises a level, and the audit names integration:<id>', async () => {
  const customer = await createCustomer(app, admin);
  const docId = await pendingDocument(customer);
  const answer = expectOk(await sendReview(review(customer, 'GREEN')), 200);
  expect(answer).toMatchObject({ outcome: 'processed', documents: [{ id: docId, status: 'approved' }] });
  expect(await documentOf(customer, docId)).toMatchObject({ status: 'approved' });
  expect(expectOk(await app.request('GET', '/customers/me', { token: customer.token }), 200).verification_level).toBe(1);
  const audit = expectOk(
    await app.request('GET', `/api/admin/audit?entity_type=document&entity_id=${docId}`, { token: admin }),
    200,
  );
  expect(audit.items).toEqual([
    expect.objectContaining({
      action: 'document.approved',
      actor_type: 'integration',
      actor_id: kyc.id,
      actor: `integration:${kyc.id}`,
    }),
  ]);
  const staffView = expectOk(await app.request('GET', `/api/crm/customers/${customer.id}/documents`, { token: admin }), 200);
  expect(staffView.items[0]).toMatchObject({ id: docId, status: 'approved', decided_by: null });
});

test('when a signed RED review names a document, then that document is rejected with the labels as its reason and the others stay pending', async () => {
  const customer = await createCustomer(app, admin);
  const named = await pendingDocument(customer);
  const other = await pendingDocument(customer);
  const answer = expectOk(
    await sendReview(
      review(customer, 'RED', {
        document_ids: [named],
        reviewResult: { reviewAnswer: 'RED', rejectLabels: ['DOCUMENT_DAMAGED'], moderationComment: 'Unreadable' },
      }),
    ),
    200,
  );
  expect(answer.documents).toEqual([{ id: named, status: 'rejected' }]);
  expect(await documentOf(customer, named)).toMatchObject({ status: 'rejected', reason: 'DOCUMENT_DAMAGED: Unreadable' });
  expect(await documentOf(customer, other)).toMatchObject({ status: 'pending' });
  const [row] = await sql<{ actor_type: string; actor_id: string }>(
    app,
    `select actor_type, actor_id from audit_entries where action = 'document.rejected' and entity_id = ?`,
    [named],
  );
  expect(row).toEqual({ actor_type: 'integration', actor_id: kyc.id });
});

test('when the signature is wrong or stale, then the answer is 401 SIGNATURE_INVALID, the document is untouched and the call is logged rejected', async () => {
  const integration = await createKyc();
  const customer = await createCustomer(app, admin);
  const docId = await pendingDocument(customer);
  expectError(await sendReview(review(customer, 'GREEN'), newSecret(), integration.id), 401, 'SIGNATURE_INVALID');
  const raw = JSON.stringify(review(customer, 'GREEN'));
  const old = new Date(Date.now() - 6 * 60_000);
  const stale = await app.request('POST', `/api/integrations/kyc/${integration.id}/callbacks`, {
    rawBody: raw,
    headers: {
      'content-type': 'application/json',
      'webhook-id': 'msg_stale',
      'webhook-timestamp': String(Math.floor(old.getTime() / 1000)),
      'webhook-signature': new Webhook(integration.secret).sign('msg_stale', old, raw),
    },
  });
  expectError(stale, 401, 'SIGNATURE_INVALID');
  expect(await documentOf(customer, docId)).toMatchObject({ status: 'pending' });
  expect(await inboundOutcomes(app, integration.id)).toEqual({ rejected: 2 });
  const inbound = expectOk(
    await app.request('GET', `/api/admin/integrations/${integration.id}/inbound?outcome=rejected`, { token: admin }),
    200,
  );
  expect(inbound.items[0]).toMatchObject({ signature_valid: false, outcome: 'rejected' });
});

test('when the same review arrives 3 times in parallel, then it decides once, and the log shows 1 processed and 2 duplicate', async () => {
  const integration = await createKyc();
  const customer = await createCustomer(app, admin);
  const docId = await pendingDocument(customer);
  const body = review(customer, 'GREEN');
  const answers = await Promise.all([1, 2, 3].map(() => sendReview(body, integration.secret, integration.id)));
  expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
  expect(answers.map((a) => a.body.outcome).sort()).toEqual(['duplicate', 'duplicate', 'processed']);
  expect(await inboundOutcomes(app, integration.id)).toEqual({ processed: 1, duplicate: 2 });
  const audits = await sql(app, `select id from audit_entries where action = 'document.approved' and entity_id = ?`, [docId]);
  expect(audits).toHaveLength(1);
});

test('when a review names an unknown customer, then it is 404 and logged failed, and a reprocess after the fix applies it once', async () => {
  const integration = await createKyc();
  const customer = await createCustomer(app, admin);
  const docId = await pendingDocument(customer);
  const body = review(customer, 'GREEN', { externalUserId: randomUUID() });
  expectError(await sendReview(body, integration.secret, integration.id), 404, 'NOT_FOUND');
  const [failed] = await sql<{ id: string }>(
    app,
    `select id from integration_inbound where integration_id = ? and outcome = 'failed'`,
    [integration.id],
  );
  await sql(app, `update integration_inbound set body = ? where id = ?`, [
    JSON.stringify({ ...body, externalUserId: customer.id }),
    failed!.id,
  ]);
  const path = `/api/admin/integrations/${integration.id}/inbound/${failed!.id}/reprocess`;
  expect(expectOk(await app.request('POST', path, { token: admin }), 200)).toMatchObject({ outcome: 'processed' });
  expect(await documentOf(customer, docId)).toMatchObject({ status: 'approved' });
  expectError(await app.request('POST', path, { token: admin }), 409, 'INBOUND_NOT_FAILED');
  const [reprocessed] = await sql<{ actor_type: string }>(
    app,
    `select actor_type from audit_entries where action = 'integration.inbound_reprocessed' and entity_id = ?`,
    [failed!.id],
  );
  expect(reprocessed).toEqual({ actor_type: 'user' });
});

test('when a signed body misses its review result, then it is 422 and logged failed, and nothing is decided', async () => {
  const integration = await createKyc();
  const customer = await createCustomer(app, admin);
  const docId = await pendingDocument(customer);
  const { reviewResult: _, ...bare } = review(customer, 'GREEN');
  const res = await sendReview(bare, integration.secret, integration.id);
  expect(res.status).toBe(422);
  expect(res.body.detail[0].loc).toEqual(['body', 'reviewResult']);
  expect(await documentOf(customer, docId)).toMatchObject({ status: 'pending' });
  expect(await inboundOutcomes(app, integration.id)).toEqual({ failed: 1 });
});

test('when a review carries Sumsub’s own fields, then correlationId keys it, and without any id the signed message id does', async () => {
  const integration = await createKyc();
  const customer = await createCustomer(app, admin);
  const first = await pendingDocument(customer);
  // As Sumsub sends it: no `external_id`, fields we do not read, the customer as externalUserId.
  const sumsub = {
    applicantId: '5cb56e8e0a975a35f333cb83',
    inspectionId: '5cb56e8e0a975a35f333cb84',
    correlationId: `req-${randomUUID()}`,
    externalUserId: customer.id,
    levelName: 'basic-kyc-level',
    type: 'applicantReviewed',
    reviewStatus: 'completed',
    createdAtMs: '2026-11-28 10:00:00.000',
    reviewResult: { reviewAnswer: 'GREEN' },
  };
  expect(expectOk(await sendReview(sumsub, integration.secret, integration.id), 200).outcome).toBe('processed');
  expect(expectOk(await sendReview(sumsub, integration.secret, integration.id), 200).outcome).toBe('duplicate');
  expect(await documentOf(customer, first)).toMatchObject({ status: 'approved' });
  const [logged] = await sql<{ external_id: string }>(
    app,
    `select external_id from integration_inbound where integration_id = ? and outcome = 'processed'`,
    [integration.id],
  );
  expect(logged!.external_id).toBe(sumsub.correlationId);

  const second = await pendingDocument(customer);
  const { correlationId: _, ...unnamed } = sumsub;
  const red = { ...unnamed, reviewResult: { reviewAnswer: 'RED', rejectLabels: ['SELFIE_MISMATCH'] } };
  const msgId = `msg_${randomUUID()}`;
  expect(expectOk(await sendReview(red, integration.secret, integration.id, msgId), 200).documents).toEqual([
    { id: second, status: 'rejected' },
  ]);
  // The provider's retry of that message (same webhook-id, signed again) is the same review.
  expect(expectOk(await sendReview(red, integration.secret, integration.id, msgId), 200).outcome).toBe('duplicate');
  expect(await inboundOutcomes(app, integration.id)).toEqual({ processed: 2, duplicate: 2 });
});

test('when the integration names allowed_ips and a signed call comes from elsewhere, then 401 SIGNATURE_INVALID, logged rejected', async () => {
  const integration = await createKyc({ allowed_ips: ['203.0.113.0/24'] });
  const customer = await createCustomer(app, admin);
  const docId = await pendingDocument(customer);
  expectError(await sendReview(review(customer, 'GREEN'), integration.secret, integration.id), 401, 'SIGNATURE_INVALID');
  expect(await documentOf(customer, docId)).toMatchObject({ status: 'pending' });
  const [row] = await sql<{ outcome: string; error: string }>(
    app,
    'select outcome, error from integration_inbound where integration_id = ?',
    [integration.id],
  );
  expect(row).toEqual({ outcome: 'rejected', error: expect.stringContaining('outside allowed_ips') });
});
