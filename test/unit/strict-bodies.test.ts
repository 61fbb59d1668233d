import { z } from 'zod';
import { buildOpenApiDocument } from '../../src/api/openapi/openapi-document';
import { ROUTES } from '../../src/api/routes';
import { zodIssuesToItems } from '../../src/api/validation/zod-issues';

/**
 * Trading and money routes refuse unknown body fields; other routes
 * ignore them. The family is read off the route table, so a trading or money route added
 * later with a lenient body fails here.
 */
const REFUSING =
  /^\/(orders(\/|$)|customers\/me\/(transfer|withdraw)$|api\/backoffice\/accounts\/\{login\}\/deposits$|api\/backoffice\/withdrawals\/|prop\/payouts)/;
const writes = (r: { method: string }) => ['post', 'put', 'patch'].includes(r.method);
const family = ROUTES.filter((r) => writes(r) && REFUSING.test(r.path));
const name = (r: { method: string; path: string }) => `${r.method.toUpperCase()} ${r.path}`;
const doc = buildOpenApiDocument(ROUTES) as any;

test('when the route table is read, then the family holds every order, transfer, withdrawal, deposit and payout write', () => {
  expect(family.map(name)).toEqual(
    expect.arrayContaining([
      'POST /orders',
      'POST /orders/pending',
      'PATCH /orders/pending/{order_id}',
      'POST /orders/{ticket}/close',
      'POST /orders/bulk-close',
      'POST /customers/me/transfer',
      'POST /customers/me/withdraw',
      'POST /api/backoffice/accounts/{login}/deposits',
      'POST /prop/payouts',
      'POST /prop/payouts/{payout_id}/approve',
    ]),
  );
});

test.each(family.map((r) => [name(r), r] as const))(
  'when %s is a trading or money write, then its body refuses unknown fields and its document says so',
  (_name, route) => {
    expect(route.body).toBeDefined();
    const typo = route.body!.safeParse({ stop_loss: 1 });
    expect(typo.success).toBe(false);
    expect(typo.error!.issues.some((i) => i.code === 'unrecognized_keys')).toBe(true);
    const body = resolved(doc.paths[route.path][route.method].requestBody.content['application/json'].schema);
    expect(body.additionalProperties).toBe(false);
  },
);

test('when a route outside the family gets an unknown field, then it still ignores it (groups)', () => {
  const createGroup = ROUTES.find((r) => r.operationId === 'createGroup')!;
  expect(createGroup.body!.safeParse({ name: 'G', is_default: true }).success).toBe(true);
  expect(resolved(doc.paths['/groups'].post.requestBody.content['application/json'].schema).additionalProperties).toBeUndefined();
});

test('when a close is documented, then its body is optional (a close needs none)', () => {
  expect(doc.paths['/orders/{ticket}/close'].post.requestBody.required).toBe(false);
  expect(doc.paths['/orders'].post.requestBody.required).toBe(true);
});

test.each(['openOrder', 'createPendingOrder', 'closeOrder', 'bulkCloseOrders'])(
  'when %s is retried, then it takes an Idempotency-Key like the money routes',
  (operationId) => {
    const route = ROUTES.find((r) => r.operationId === operationId)!;
    expect(route.idempotent).toBe(true);
    expect(doc.paths[route.path][route.method].parameters.map((p: { name: string }) => p.name)).toContain('Idempotency-Key');
  },
);

describe('extra_forbidden', () => {
  const schema = z.strictObject({ sl: z.number().optional(), leg: z.strictObject({ at: z.number() }).optional() });

  test('when unknown fields come, then each is an extra_forbidden item at its own path, as Pydantic reports them', () => {
    const input = { stop_loss: 1.05, take_profit: 1.2, leg: { at: 1, when: 2 } };
    const parsed = schema.safeParse(input, { reportInput: true });
    expect(parsed.success).toBe(false);
    const items = zodIssuesToItems('body', parsed.error!.issues, schema, input);
    expect(items).toEqual(
      expect.arrayContaining([
        { loc: ['body', 'stop_loss'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
        { loc: ['body', 'take_profit'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
        { loc: ['body', 'leg', 'when'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
      ]),
    );
    expect(items).toHaveLength(3);
  });
});

/** A body schema as a client reads it: request bodies are named components, referenced by $ref. */
function resolved(schema: { $ref?: string; additionalProperties?: unknown }): { additionalProperties?: unknown } {
  if (!schema.$ref) return schema;
  const name = schema.$ref.replace('#/components/schemas/', '');
  return doc.components.schemas[name];
}
