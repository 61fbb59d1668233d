import { buildOpenApiDocument, documentationProblems } from '../../src/api/openapi/openapi-document';
import { ROUTES } from '../../src/api/routes';

const doc = buildOpenApiDocument(ROUTES) as any;
const operations = ROUTES.map((route) => ({ route, op: doc.paths[route.path][route.method] }));
const name = (r: { method: string; path: string }) => `${r.method.toUpperCase()} ${r.path}`;

describe('the OpenAPI document generated from the route table', () => {
  test('when the table is read, then operation ids are unique camelCase verb phrases and every tag is declared', () => {
    expect(documentationProblems(ROUTES)).toEqual([]);
    const declared = new Set(doc.tags.map((t: { name: string }) => t.name));
    for (const { op } of operations) for (const tag of op.tags) expect(declared).toContain(tag);
    expect(doc['x-tagGroups'].flatMap((g: { tags: string[] }) => g.tags).sort()).toEqual([...declared].sort());
  });

  test.each(operations.map((o) => [name(o.route), o] as const))(
    'when %s is documented, then it lists the errors its access and inputs can give',
    (_name, { route, op }) => {
      const statuses = Object.keys(op.responses);
      expect(statuses).toContain('4XX');
      expect(statuses).toContain('default');
      if (route.access.kind === 'public') {
        expect(op.security).toEqual([]);
        // No permission to lack: a 403 of a public route is one it declares itself (a refused country, a fraud block).
        if (!route.responses[403]) expect(statuses).not.toContain('403');
      } else {
        expect(op.responses['401']).toEqual({ $ref: '#/components/responses/Unauthenticated' });
        // Any valid token may call an `authenticated` route: it has no 403 to give.
        if (route.access.kind === 'authenticated') expect(statuses).not.toContain('403');
        else expect(op.responses['403'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
        expect(op.security.length).toBeGreaterThan(0);
      }
      if (route.params) expect(statuses).toContain('404');
      if (route.body || route.query || route.params) expect(statuses).toContain('422');
      for (const status of statuses.filter((s) => /^[45]\d\d$/.test(s))) {
        const response = op.responses[status];
        expect(response.$ref ?? response.content?.['application/json']?.schema).toBeDefined();
      }
    },
  );

  test('when a route needs a permission, then both the access token and the API token scheme name it', () => {
    const createGroup = doc.paths['/groups'].post;
    expect(createGroup.security).toEqual([{ accessToken: ['manage_groups'] }, { apiToken: ['manage_groups'] }]);
    expect(doc.paths['/customers/me/accounts'].get.security).toEqual([{ accessToken: [] }]);
  });

  test('when a login is throttled, then its 429 carries Retry-After', () => {
    const login = doc.paths['/api/admin/users/login'].post;
    expect(login.responses['429'].$ref).toBe('#/components/responses/RateLimited');
    expect(doc.components.responses.RateLimited.headers['Retry-After']).toBeDefined();
  });

  test('when tickets and order ids are path parameters, then they are digits only, so /orders/pending/close is not a ticket', () => {
    const ticket = doc.paths['/orders/{ticket}/close'].post.parameters.find((p: any) => p.name === 'ticket');
    expect(ticket.schema).toMatchObject({ type: 'string', pattern: '^[0-9]{1,16}$' });
    expect(new RegExp(ticket.schema.pattern).test('pending')).toBe(false);
    expect(new RegExp(ticket.schema.pattern).test('bulk-close')).toBe(false);
    const orderId = doc.paths['/orders/pending/{order_id}'].patch.parameters.find((p: any) => p.name === 'order_id');
    expect(orderId.schema.pattern).toBe('^[0-9]{1,16}$');
  });

  test('when an integrator reads the document, then it has servers, a license and both security schemes', () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(doc.info.license.name).toBeTruthy();
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['accessToken', 'apiToken']);
  });

  test('when a route takes an Idempotency-Key, then the header is documented', () => {
    const deposit = doc.paths['/api/backoffice/accounts/{login}/deposits'].post;
    expect(deposit.parameters.map((p: any) => `${p.in}:${p.name}`)).toContain('header:Idempotency-Key');
  });
});

describe('rules a generated client can enforce', () => {
  const schema = (n: string) => doc.components.schemas[n];
  // Not multipleOf: validators divide in binary floating point and would refuse 33.33 (see decimal-places.ts).
  test('when volumes and amounts with decimal places are read, then their places are stated, and no float step is', () => {
    const volume = schema('OpenOrderRequest').properties.volume;
    expect(volume).toMatchObject({ 'x-decimal-places': 2, exclusiveMinimum: 0, maximum: 1000 });
    const amount = schema('TransferBetweenMyAccountsRequest').properties.amount;
    expect(amount).toMatchObject({ 'x-decimal-places': 2 });
    expect(JSON.stringify(doc)).not.toContain('"multipleOf"');
  });

  test('when an order type is read, then cmd is an integer with its values listed, in requests and answers', () => {
    expect(schema('OpenOrderRequest').properties.cmd).toMatchObject({ type: 'integer', enum: [0, 1] });
    expect(schema('CreatePendingOrderRequest').properties.cmd).toMatchObject({ type: 'integer', enum: [2, 3, 4, 5, 6, 7] });
    expect(schema('Order').properties.cmd).toMatchObject({ type: 'integer', enum: [0, 1] });
    expect(schema('PendingOrder').properties.cmd).toMatchObject({ type: 'integer', enum: [2, 3, 4, 5, 6, 7] });
  });

  test('when a webhook is created, then its secret has its length bounds and its address is a URI', () => {
    for (const n of ['CreateWebhookRequest', 'UpdateWebhookRequest', 'RotateWebhookSecretRequest'])
      expect({ n, secret: schema(n).properties.secret }).toMatchObject({ n, secret: { minLength: 24, maxLength: 256 } });
    expect(schema('CreateWebhookRequest').properties.endpoint_url).toMatchObject({ format: 'uri', maxLength: 2048 });
  });
});

describe('the document describing itself', () => {
  test('when a client reads the document, then it lists GET /openapi.json and GET /docs, public and without a body', () => {
    expect(doc.paths['/openapi.json'].get).toMatchObject({ operationId: 'getOpenApiDocument', security: [] });
    expect(doc.paths['/docs'].get).toMatchObject({ operationId: 'getApiDocsPage', security: [] });
    expect(doc.paths['/openapi.json'].get.requestBody).toBeUndefined();
  });

  test('when a trading route takes no fields, then its optional body refuses any, and other bodiless POSTs declare an ignored body', () => {
    const close = doc.paths['/orders/{ticket}/close'].post;
    expect(close.requestBody.required).toBe(false);
    expect(close.responses['422']).toEqual({ $ref: '#/components/responses/ValidationFailed' });
    const readAll = doc.paths['/customers/me/notifications/read-all'].post;
    expect(readAll.requestBody).toMatchObject({ required: false, content: { 'application/json': { example: {} } } });
  });
});
