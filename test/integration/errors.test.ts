import { z } from 'zod';
import { defineRoute, json, type RouteSpec } from '../../src/api/http/route';
import { buildOpenApiDocument } from '../../src/api/openapi/openapi-document';
import { ROUTES } from '../../src/api/routes';
import { AppError, fieldError } from '../../src/platform/errors';
import { startTestApp, type TestApp } from '../helpers/test-app';

/** A route using every kind of zod check the project's schemas use, to pin the 422 format. */
const ProbeBody = z.object({
  name: z.string().min(1).max(5),
  count: z.int().min(1).max(10),
  ratio: z.number().gt(0).lte(2),
  flag: z.boolean(),
  kind: z.enum(['none', 'per_lot']),
  ref: z.uuid().optional(),
  url: z.url().optional(),
  code: z
    .string()
    .regex(/^[A-Z]{3}$/)
    .optional(),
  note: z.string().nullable().optional(),
  tags: z.array(z.string().max(3)).max(2).optional(),
  nested: z.object({ level: z.int().nonnegative() }).optional(),
});

const Echo = z.record(z.string(), z.unknown());

const probeRoutes: RouteSpec[] = [
  ...ROUTES,
  defineRoute({
    method: 'post',
    path: '/probe/{item_id}',
    operationId: 'probe',
    summary: 'probe',
    tags: ['test'],
    access: { kind: 'public' },
    params: z.object({ item_id: z.uuid() }),
    query: z.object({ page: z.coerce.number().int().min(1).default(1) }),
    body: ProbeBody,
    responses: { 200: { description: 'The parsed input', schema: z.object({ body: ProbeBody, query: Echo, params: Echo }) } },
    handler: ({ body, query, params }) => json(200, { body, query, params }),
  }),
  defineRoute({
    method: 'get',
    path: '/probe/boom',
    operationId: 'boom',
    summary: 'throws an unexpected error',
    tags: ['test'],
    access: { kind: 'public' },
    responses: { 500: { description: 'always' } },
    handler: () => {
      throw new Error('secret internals at /srv/app/db.ts:42');
    },
  }),
  defineRoute({
    method: 'get',
    path: '/probe/conflict',
    operationId: 'conflict',
    summary: 'throws a conflict',
    tags: ['test'],
    access: { kind: 'public' },
    responses: { 409: { description: 'always' } },
    handler: () => {
      throw new AppError(409, 'NAME_TAKEN', 'That name is taken');
    },
  }),
  defineRoute({
    method: 'get',
    path: '/probe/rule',
    operationId: 'rule',
    summary: 'breaks a business rule',
    tags: ['test'],
    access: { kind: 'public' },
    responses: { 422: { description: 'always' } },
    handler: () => {
      throw fieldError('body', ['amount'], 'Amount exceeds what can be withdrawn');
    },
  }),
];

const ID = '1b4e28ba-2fa1-41d2-883f-0016d3cca427';
const valid = { name: 'abc', count: 5, ratio: 1, flag: true, kind: 'none' };

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ label: 'errors', routes: probeRoutes, env: { ROLE: 'api', BODY_LIMIT_BYTES: '2048' } });
});
afterAll(() => app.stop());

async function typesFor(body: unknown): Promise<Array<[string, string]>> {
  const res = await app.request('POST', `/probe/${ID}`, { body });
  expect(res.status).toBe(422);
  return res.body.detail.map((d: { loc: unknown[]; type: string }) => [d.loc.join('.'), d.type]);
}

describe('validation errors', () => {
  test('when the body is valid, then the handler gets parsed values', async () => {
    const res = await app.request('POST', `/probe/${ID}?page=3`, { body: { ...valid, unknown_field: 1 } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ body: valid, query: { page: 3 }, params: { item_id: ID } });
  });

  test.each([
    ['missing field', { ...valid, name: undefined }, 'body.name', 'missing'],
    ['string of wrong type', { ...valid, name: 5 }, 'body.name', 'string_type'],
    ['null for a non-nullable string', { ...valid, name: null }, 'body.name', 'string_type'],
    ['string too short', { ...valid, name: '' }, 'body.name', 'string_too_short'],
    ['string too long', { ...valid, name: 'abcdef' }, 'body.name', 'string_too_long'],
    ['integer of wrong type', { ...valid, count: 'x' }, 'body.count', 'int_type'],
    ['fractional integer', { ...valid, count: 1.5 }, 'body.count', 'int_type'],
    ['integer below minimum', { ...valid, count: 0 }, 'body.count', 'greater_than_equal'],
    ['integer above maximum', { ...valid, count: 11 }, 'body.count', 'less_than_equal'],
    ['number of wrong type', { ...valid, ratio: '1' }, 'body.ratio', 'float_type'],
    ['number not above exclusive minimum', { ...valid, ratio: 0 }, 'body.ratio', 'greater_than'],
    ['number above maximum', { ...valid, ratio: 2.01 }, 'body.ratio', 'less_than_equal'],
    ['boolean of wrong type', { ...valid, flag: 'yes' }, 'body.flag', 'bool_type'],
    ['value outside an enum', { ...valid, kind: 'percentage' }, 'body.kind', 'literal_error'],
    ['bad uuid', { ...valid, ref: 'nope' }, 'body.ref', 'uuid_parsing'],
    ['bad url', { ...valid, url: 'not a url' }, 'body.url', 'url_parsing'],
    ['pattern mismatch', { ...valid, code: 'usd' }, 'body.code', 'string_pattern_mismatch'],
    ['array element invalid', { ...valid, tags: ['ok', 'long'] }, 'body.tags.1', 'string_too_long'],
    ['array too long', { ...valid, tags: ['a', 'b', 'c'] }, 'body.tags', 'too_long'],
    ['nested field', { ...valid, nested: { level: -1 } }, 'body.nested.level', 'greater_than_equal'],
    ['object of wrong type', { ...valid, nested: 'x' }, 'body.nested', 'dict_type'],
  ])('when %s, then 422 at the field with the Pydantic type', async (_case, body, loc, type) => {
    expect(await typesFor(body)).toEqual([[loc, type]]);
  });

  test('when several fields fail, then every failure is listed with msg, loc and type', async () => {
    const res = await app.request('POST', `/probe/${ID}`, { body: { ...valid, name: '', count: 0 } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      { loc: ['body', 'name'], msg: 'String should have at least 1 character', type: 'string_too_short' },
      { loc: ['body', 'count'], msg: 'Input should be greater than or equal to 1', type: 'greater_than_equal' },
    ]);
  });

  test('when the array index fails, then loc carries it as an integer', async () => {
    const res = await app.request('POST', `/probe/${ID}`, { body: { ...valid, tags: ['abcd'] } });
    expect(res.body.detail[0].loc).toEqual(['body', 'tags', 0]);
  });

  test('when path and query are invalid, then loc starts with path and query', async () => {
    const res = await app.request('POST', '/probe/not-a-uuid?page=0', { body: valid });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: { loc: unknown[]; type: string }) => [d.loc, d.type])).toEqual([
      [['path', 'item_id'], 'uuid_parsing'],
      [['query', 'page'], 'greater_than_equal'],
    ]);
  });

  test('when the body is not JSON at all, then 422 missing at body', async () => {
    const res = await app.request('POST', `/probe/${ID}`);
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
  });

  test.each([
    ['text/plain', JSON.stringify(valid)],
    ['application/x-www-form-urlencoded', 'name=abc&count=5'],
    ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nabc\r\n--x--\r\n'],
    ['application/xml', '<name>abc</name>'],
  ])('when a JSON route gets a %s body, then 415 UNSUPPORTED_MEDIA_TYPE and nothing runs', async (type, rawBody) => {
    for (const path of [`/probe/${ID}`, '/api/customer/login']) {
      const res = await app.request('POST', path, { rawBody, headers: { 'content-type': type } });
      expect({ path, status: res.status, body: res.body }).toEqual({
        path,
        status: 415,
        body: { detail: expect.stringContaining('application/json'), code: 'UNSUPPORTED_MEDIA_TYPE' },
      });
    }
  });

  test('when a JSON body says application/json with a charset or a +json type, then it is read', async () => {
    for (const type of ['application/json; charset=utf-8', 'application/merge-patch+json']) {
      const res = await app.request('POST', `/probe/${ID}`, {
        rawBody: JSON.stringify(valid),
        headers: { 'content-type': type },
      });
      expect([type, res.status]).toEqual([type, 200]);
    }
  });

  test('when the JSON is malformed, then 422 json_invalid', async () => {
    const res = await app.request('POST', `/probe/${ID}`, { rawBody: '{"name": "abc",' });
    expect(res.status).toBe(422);
    expect(res.body.detail).toHaveLength(1);
    expect(res.body.detail[0]).toMatchObject({ type: 'json_invalid', loc: ['body', expect.any(Number)] });
  });

  test('when the body is a JSON array instead of an object, then 422 dict_type at body', async () => {
    const res = await app.request('POST', `/probe/${ID}`, { body: [1, 2] });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([{ loc: ['body'], msg: 'Input should be a valid dictionary or object', type: 'dict_type' }]);
  });

  test('when a business rule fails, then 422 points at the field', async () => {
    const res = await app.request('GET', '/probe/rule');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: [{ loc: ['body', 'amount'], msg: 'Amount exceeds what can be withdrawn', type: 'value_error' }],
    });
  });
});

describe('other errors', () => {
  test('when the route is unknown, then 404 NOT_FOUND', async () => {
    const res = await app.request('GET', '/no/such/route');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Route not found', code: 'NOT_FOUND' });
  });

  test('when the body is larger than the limit, then 413 and nothing runs', async () => {
    const res = await app.request('POST', `/probe/${ID}`, { body: { ...valid, note: 'x'.repeat(5000) } });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ detail: 'The request body is too large', code: 'PAYLOAD_TOO_LARGE' });
  });

  test('when a domain conflict is thrown, then its status and code are kept', async () => {
    const res = await app.request('GET', '/probe/conflict');
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ detail: 'That name is taken', code: 'NAME_TAKEN' });
  });

  test('when a handler fails unexpectedly, then 500 INTERNAL names the request id and hides the cause', async () => {
    const res = await app.request('GET', '/probe/boom');
    expect(res.status).toBe(500);
    const id = res.headers.get('x-request-id');
    expect(res.body).toEqual({ detail: `Internal error (request id ${id})`, code: 'INTERNAL' });
    expect(res.text).not.toContain('secret internals');
    expect(res.text).not.toMatch(/at .*\.ts/);
    // The cause is in the log, tied to the request.
    const line = app.logs.find((l) => l.msg === 'unhandled error' && l.request_id === id);
    expect(line).toBeDefined();
  });
});

describe('request ids', () => {
  test('when any response is sent, then it carries X-Request-Id and so does every log line of it', async () => {
    for (const [method, path] of [
      ['GET', '/health'],
      ['GET', '/nowhere'],
      ['GET', '/probe/boom'],
    ]) {
      const res = await app.request(method, path);
      const id = res.headers.get('x-request-id');
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const lines = app.logs.filter((l) => l.request_id === id);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.find((l) => l.msg === 'request')).toMatchObject({ status: res.status });
    }
  });

  test('when the caller sends a plain request id, then it is kept; a strange one is replaced', async () => {
    const kept = await app.request('GET', '/health', { headers: { 'x-request-id': 'client-abc-12345' } });
    expect(kept.headers.get('x-request-id')).toBe('client-abc-12345');
    const replaced = await app.request('GET', '/health', { headers: { 'x-request-id': 'bad id\twith tab' } });
    expect(replaced.headers.get('x-request-id')).not.toContain('bad');
  });
});

describe('the documented refusals', () => {
  test('when a token does not verify, then the 401 is the one the API description shows', async () => {
    const doc = buildOpenApiDocument(ROUTES) as any;
    const documented = doc.components.responses.Unauthenticated.content['application/json'].example;
    const res = await app.request('GET', '/customers/me', { headers: { authorization: 'Bearer not-a-token' } });
    expect({ status: res.status, body: res.body, challenge: res.headers.get('www-authenticate') }).toEqual({
      status: 401,
      body: documented,
      challenge: 'Bearer',
    });
  });
});
