import { z } from 'zod';
import { defineRoute, type RouteSpec } from '../../src/api/http/route';
import { ROUTES } from '../../src/api/routes';
import { adminToken } from '../helpers/identity';
import { startTestApp, type TestApp } from '../helpers/test-app';

/**
 * Under NODE_ENV=test every answer is checked against the schema its route declares for its
 * status, so every integration test also tests the contract. A drift fails loudly.
 */
const Thing = z.object({ id: z.int(), name: z.string(), tags: z.array(z.object({ label: z.string() })) });

let answer: { status: number; body?: unknown } = { status: 200 };
const probe: RouteSpec = defineRoute({
  method: 'post',
  path: '/probe/contract',
  operationId: 'probeContract',
  summary: 'answers whatever the test sets',
  tags: ['test'],
  // Not public: an Idempotency-Key is kept per caller.
  access: { kind: 'staff', permission: 'view_audit' },
  idempotent: true,
  responses: { 200: { description: 'A thing', schema: Thing }, 204: { description: 'Nothing' } },
  handler: () => answer,
});
const routes = [...ROUTES, probe];

let app: TestApp;
let token: string;
let production: TestApp;
beforeAll(async () => {
  app = await startTestApp({ label: 'contract', routes, env: { ROLE: 'api' } });
  token = await adminToken(app);
  production = await startTestApp({ label: 'contractdev', routes, env: { ROLE: 'api', NODE_ENV: 'development' } });
});
afterAll(async () => {
  await app?.stop();
  await production?.stop();
});

async function answering(status: number, body?: unknown, headers: Record<string, string> = {}) {
  answer = { status, body };
  return app.request('POST', '/probe/contract', { token, headers });
}

describe('the response contract under test', () => {
  test('when the answer matches its schema, then it goes out as it is', async () => {
    const res = await answering(200, { id: 1, name: 'a', tags: [{ label: 'x' }] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: 1, name: 'a', tags: [{ label: 'x' }] });
    expect((await answering(204)).status).toBe(204);
  });

  test('when a field has the wrong type or is missing, then 500 CONTRACT_VIOLATION names the route, status and issues', async () => {
    const res = await answering(200, { id: '1', tags: [] });
    expect(res.status).toBe(500);
    expect(res.body.code).toBe('CONTRACT_VIOLATION');
    expect(res.body.detail).toContain('POST /probe/contract answered 200');
    expect(res.body.detail).toMatch(/id: .*invalid_type/);
    expect(res.body.detail).toMatch(/name: .*invalid_type/);
    const id = res.headers.get('x-request-id');
    const line = app.logs.find((l) => l.msg === 'reply breaks its declared contract' && l.request_id === id);
    expect(line).toMatchObject({ level: 50, route: 'POST /probe/contract', status: 200 });
    expect((line!.problems as string[]).length).toBe(2);
  });

  test('when the answer carries a key its schema does not name, at any depth, then it is a violation', async () => {
    const res = await answering(200, { id: 1, name: 'a', tags: [{ label: 'x', colour: 'red' }], secret: 's' });
    expect(res.status).toBe(500);
    expect(res.body.detail).toContain('tags.0.colour: not in the schema');
    expect(res.body.detail).toContain('secret: not in the schema');
  });

  test('when the route answers a status it does not declare, then it is a violation', async () => {
    const res = await answering(201, { id: 1, name: 'a', tags: [] });
    expect(res.status).toBe(500);
    expect(res.body.detail).toContain('status 201 is not declared (the route declares 200, 204)');
  });

  test('when a declared body is missing, or an undeclared one is sent, then it is a violation', async () => {
    expect((await answering(200)).body.detail).toContain('the answer has no body, but the route declares one');
    expect((await answering(204, { id: 1 })).body.detail).toContain('the answer has a body, but the route declares none');
  });

  test('when the body is checked, then it is the JSON the client gets (a Date is text by then)', async () => {
    const res = await answering(200, { id: 1, name: 'a', tags: [], when: new Date(0) });
    expect(res.body.detail).toContain('when: not in the schema');
  });

  test('when an idempotent request breaks its contract, then the broken answer is not kept for replay', async () => {
    const key = { 'Idempotency-Key': `contract-${Date.now()}` };
    expect((await answering(200, { id: 'broken' }, key)).status).toBe(500);
    const retry = await answering(200, { id: 2, name: 'b', tags: [] }, key);
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('outside test', () => {
  test('when NODE_ENV is not test, then answers are not checked', async () => {
    answer = { status: 200, body: { id: 'not checked' } };
    const res = await production.request('POST', '/probe/contract', { token: await adminToken(production) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: 'not checked' });
  });
});
