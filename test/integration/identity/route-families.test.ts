import { randomUUID } from 'node:crypto';
import { checkRouteFamilies, PUBLIC_ROUTES } from '../../../src/api/http/access';
import type { RouteSpec } from '../../../src/api/http/route';
import { ROUTES } from '../../../src/api/routes';
import { PERMISSIONS, type Permission } from '../../../src/domain/identity/permissions';
import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { startTestApp, type TestApp, type TestResponse } from '../../helpers/test-app';

/**
 * Walks the application's own route table, so a route added later inherits these checks
 * without anyone remembering to write them.
 */

/** Public routes outside every guarded family: anything else public must be added here on purpose. */
// The service's own description is public too: the OpenAPI document and its Swagger UI.
const OPEN_OUTSIDE_FAMILIES = new Set([
  'GET /health',
  'GET /ready',
  'GET /metrics',
  'GET /openapi.json',
  'GET /docs',
  // A payment or KYC provider has no token: its callbacks are authenticated by their signature.
  'POST /api/integrations/payments/{provider_id}/callbacks',
  'POST /api/integrations/kyc/{integration_id}/callbacks',
]);

const nameOf = (r: RouteSpec) => `${r.method.toUpperCase()} ${r.path}`;
const fill = (path: string) => path.replace(/\{[^}]+\}/g, () => randomUUID());
const withKind = (...kinds: string[]) => ROUTES.filter((r) => kinds.includes(r.access.kind)).map((r) => [nameOf(r), r] as const);
const permissionOf = (r: RouteSpec): Permission => (r.access as { permission: Permission }).permission;

const guarded = withKind('staff', 'customer', 'session', 'staff_or_customer', 'authenticated');
const staffRoutes = withKind('staff');
const permissioned = withKind('staff', 'staff_or_customer');
const customerRoutes = withKind('customer');
const sessionRoutes = withKind('session');
const declaredPermissions = [...new Set(permissioned.map(([, r]) => permissionOf(r)))];

let app: TestApp;
let admin: string;
let customer: LoggedIn;
/** Per declared permission: a staff user and an API token holding exactly it, and ones holding every other permission. */
const only = new Map<Permission, { staff: string; apiToken: string }>();
const allBut = new Map<Permission, { staff: string; apiToken: string }>();
let fullApiToken: string;

async function issueApiToken(scopes: readonly string[]): Promise<string> {
  const res = await app.request('POST', '/api/crm/settings/api-tokens', {
    token: admin,
    body: { name: `walk-${randomUUID().slice(0, 8)}`, scopes },
  });
  if (res.status !== 201) throw new Error(`issuing an API token: ${res.status} ${res.text}`);
  return res.body.token as string;
}

beforeAll(async () => {
  app = await startTestApp({ label: 'idfamilies', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  customer = await createCustomer(app, admin);
  fullApiToken = await issueApiToken(PERMISSIONS);
  for (const permission of declaredPermissions) {
    const rest = PERMISSIONS.filter((p) => p !== permission);
    only.set(permission, {
      staff: (await createStaff(app, [permission], admin)).token,
      apiToken: await issueApiToken([permission]),
    });
    allBut.set(permission, { staff: (await createStaff(app, rest, admin)).token, apiToken: await issueApiToken(rest) });
  }
}, 60_000);
afterAll(() => app?.stop());

function call(route: RouteSpec, token?: string): Promise<TestResponse> {
  return app.request(route.method.toUpperCase(), fill(route.path), { token });
}

function expectForbidden(res: TestResponse, who: string, route: string): void {
  expect({ who, route, status: res.status, code: res.body?.code }).toEqual({ who, route, status: 403, code: 'FORBIDDEN' });
  expect(typeof res.body.detail).toBe('string');
}

function expectLetThrough(res: TestResponse, who: string, route: string): void {
  // Past the guard the request may still be invalid (422) or name nothing (404): only 401 and 403 are refusals.
  expect({ who, route, refused: [401, 403].includes(res.status), status: res.status }).toEqual({
    who,
    route,
    refused: false,
    status: res.status,
  });
}

describe('the route table', () => {
  test('when the route table is checked, then it has guarded routes of every kind to walk (the walk is not vacuous)', () => {
    expect(staffRoutes.length).toBeGreaterThan(0);
    expect(customerRoutes.length).toBeGreaterThan(0);
    expect(sessionRoutes.length).toBeGreaterThan(0);
    expect(() => checkRouteFamilies(ROUTES)).not.toThrow();
  });

  test('when a route is public, then it is one of the known public routes (a new public route is a decision, not an accident)', () => {
    const open = ROUTES.filter((r) => r.access.kind === 'public').map(nameOf);
    expect(open.filter((name) => !PUBLIC_ROUTES.has(name) && !OPEN_OUTSIDE_FAMILIES.has(name))).toEqual([]);
  });

  test('when a route is under /api/admin, /api/crm, /api/backoffice or /api/platform, then it is staff or an allow-listed public route', () => {
    const family = ROUTES.filter((r) => /^\/api\/(admin|crm|backoffice|platform)(\/|$)/i.test(r.path));
    expect(family.length).toBeGreaterThan(0);
    const wrong = family.filter(
      (r) => r.access.kind !== 'staff' && !(r.access.kind === 'public' && PUBLIC_ROUTES.has(nameOf(r))),
    );
    expect(wrong.map((r) => `${nameOf(r)} is ${r.access.kind}`)).toEqual([]);
  });

  test('when a route is under /api/customer or /customers/me, then it is customer or an allow-listed public route', () => {
    const family = ROUTES.filter((r) => /^\/api\/customer(\/|$)/i.test(r.path) || /^\/customers\/me(\/|$)/i.test(r.path));
    expect(family.length).toBeGreaterThan(0);
    const wrong = family.filter(
      (r) => r.access.kind !== 'customer' && !(r.access.kind === 'public' && PUBLIC_ROUTES.has(nameOf(r))),
    );
    expect(wrong.map((r) => `${nameOf(r)} is ${r.access.kind}`)).toEqual([]);
  });

  const route = (method: RouteSpec['method'], path: string, access: RouteSpec['access']): RouteSpec => ({
    method,
    path,
    access,
    operationId: 'madeUp',
    summary: 'made up',
    tags: [],
    responses: {},
    handler: () => undefined,
  });

  test.each([
    ['a customer route under /api/admin', route('get', '/api/admin/x', { kind: 'customer' })],
    ['a public route under /api/crm outside PUBLIC_ROUTES', route('get', '/api/crm/x', { kind: 'public' })],
    ['a public route under /api/platform outside PUBLIC_ROUTES', route('post', '/api/platform/x', { kind: 'public' })],
    ['a session route under /api/backoffice', route('get', '/api/backoffice/x', { kind: 'session' })],
    ['a staff route under /api/customer', route('get', '/api/customer/x', { kind: 'staff', permission: 'view_audit' })],
    ['a staff route at /customers/me', route('get', '/customers/me', { kind: 'staff', permission: 'view_audit' })],
    ['a public route under /customers/me', route('get', '/customers/me/accounts', { kind: 'public' })],
    ['a customer route under /groups', route('get', '/groups/{group_id}', { kind: 'customer' })],
    ['a public route under /auth outside PUBLIC_ROUTES', route('post', '/auth/whatever', { kind: 'public' })],
    ['a public GET of a path whose POST is allow-listed', route('get', '/api/admin/users/login', { kind: 'public' })],
    // express matches paths case-insensitively and without a trailing slash: these are served inside the families.
    ['a public route under /API/Admin in other letter case', route('get', '/API/Admin/x', { kind: 'public' })],
    [
      'a staff route under /Api/Customer in other letter case',
      route('get', '/Api/Customer/x', { kind: 'staff', permission: 'view_audit' }),
    ],
    ['a public route at the bare /api/crm prefix', route('get', '/api/crm', { kind: 'public' })],
    [
      'a staff route at the bare /api/customer prefix',
      route('get', '/api/customer', { kind: 'staff', permission: 'view_audit' }),
    ],
    ['a public route at the bare /auth prefix', route('get', '/auth', { kind: 'public' })],
  ])('when the route table holds %s, then checkRouteFamilies refuses it', (_what, bad) => {
    expect(() => checkRouteFamilies([...ROUTES, bad])).toThrow(/breaks the access rules/);
    expect(() => checkRouteFamilies([bad])).toThrow(nameOf(bad));
  });

  test('when a made-up route fits its family, then checkRouteFamilies accepts it (the refusals above are about access, not any new route)', () => {
    expect(() =>
      checkRouteFamilies([
        route('get', '/api/admin/x', { kind: 'staff', permission: 'view_audit' }),
        route('get', '/customers/me/x', { kind: 'customer' }),
        route('get', '/bench/x', { kind: 'public' }),
      ]),
    ).not.toThrow();
  });
});

describe('every guarded route', () => {
  test.each(guarded)(
    'when %s is called without a token, then 401 UNAUTHENTICATED with WWW-Authenticate: Bearer',
    async (name, r) => {
      const res = await call(r);
      expect({ name, status: res.status }).toEqual({ name, status: 401 });
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(res.body).toEqual({ detail: expect.any(String), code: 'UNAUTHENTICATED' });
    },
  );

  test.each(guarded)('when %s is called with a forged or malformed token, then 401 UNAUTHENTICATED', async (name, r) => {
    const forgedJwt = customer.token.slice(0, -4) + (customer.token.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    for (const header of [
      `Bearer ${forgedJwt}`,
      'Bearer tia_not-a-real-token',
      `Basic ${Buffer.from('a:b').toString('base64')}`,
    ]) {
      const res = await app.request(r.method.toUpperCase(), fill(r.path), { headers: { authorization: header } });
      expect({ name, header, status: res.status, code: res.body?.code }).toEqual({
        name,
        header,
        status: 401,
        code: 'UNAUTHENTICATED',
      });
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
    }
  });
});

describe('staff routes', () => {
  test.each(staffRoutes)('when %s is called with a customer token, then 403 FORBIDDEN', async (name, r) => {
    expectForbidden(await call(r, customer.token), 'customer', name);
  });

  test.each(permissioned)(
    'when %s is called by staff holding every permission but the declared one, or an API token scoped likewise, then 403 FORBIDDEN',
    async (name, r) => {
      const without = allBut.get(permissionOf(r))!;
      expectForbidden(await call(r, without.staff), 'staff without the permission', name);
      expectForbidden(await call(r, without.apiToken), 'API token without the scope', name);
    },
  );

  test.each(staffRoutes)(
    'when %s is called by staff holding only the declared permission, or an API token scoped to it, then the guard lets it through',
    async (name, r) => {
      const holder = only.get(permissionOf(r))!;
      expectLetThrough(await call(r, holder.staff), 'staff with the permission', name);
      expectLetThrough(await call(r, holder.apiToken), 'API token with the scope', name);
    },
  );
});

describe('customer routes', () => {
  test.each(customerRoutes)(
    "when %s is called with a staff token (even the admin's) or an API token, then 403 FORBIDDEN",
    async (name, r) => {
      expectForbidden(await call(r, admin), 'admin', name);
      expectForbidden(await call(r, only.values().next().value!.staff), 'staff', name);
      expectForbidden(await call(r, fullApiToken), 'API token', name);
    },
  );

  test.each(customerRoutes)('when %s is called with a customer token, then the guard lets it through', async (name, r) => {
    expectLetThrough(await call(r, customer.token), 'customer', name);
  });
});

describe('session routes', () => {
  test.each(sessionRoutes)(
    'when %s is called with an API token (even one with every scope), then 403 FORBIDDEN',
    async (name, r) => {
      expectForbidden(await call(r, fullApiToken), 'API token', name);
    },
  );

  test.each(sessionRoutes)(
    'when %s is called with a staff or a customer session token, then the guard lets it through',
    async (name, r) => {
      expectLetThrough(await call(r, admin), 'admin', name);
      expectLetThrough(await call(r, customer.token), 'customer', name);
    },
  );
});
