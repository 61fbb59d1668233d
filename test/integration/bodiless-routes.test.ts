import { ROUTES } from '../../src/api/routes';
import { adminToken, createCustomer, type LoggedIn } from '../helpers/identity';
import { sql, startTestApp, type TestApp } from '../helpers/test-app';
import { fundedAccount, openOrder, setUpMarket } from '../helpers/trading';

/**
 * A route the document lists without a requestBody takes none: a body there is 422
 * extra_forbidden at ["body"] and the request changes nothing. Without this, a close sent
 * with {"volume": 0.05} closed the whole position while the client believed it had asked
 * for part of it, and a proxy validating against the document disagreed with the service.
 */

let app: TestApp;
let admin: string;
let customer: LoggedIn;
let login: number;

beforeAll(async () => {
  app = await startTestApp({ label: 'bodiless-routes' });
  admin = await adminToken(app);
  customer = await createCustomer(app, admin);
  const { groupId } = await setUpMarket(app, admin);
  login = await fundedAccount(app, admin, customer.id, groupId);
});
afterAll(() => app?.stop());

const refusedBody = { loc: ['body'], msg: 'This operation takes no request body', type: 'extra_forbidden' };

describe('routes that take no body', () => {
  test('when a close carries a body, then it is 422 extra_forbidden at body and the order stays open', async () => {
    const ticket = await openOrder(app, customer.token, login, 0, 0.1);
    const res = await app.request('POST', `/orders/${ticket}/close`, { token: customer.token, body: { volume: 0.05 } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([refusedBody]);
    const [row] = await sql<{ status: string }>(app, 'select status from orders where ticket = ?', [ticket]);
    expect(row?.status).toBe('open');

    const closed = await app.request('POST', `/orders/${ticket}/close`, { token: customer.token });
    expect(closed.status).toBe(200);
    expect(closed.body.status).toBe('closed');
  });

  test('when an empty JSON object is sent to a bodiless POST, then it is refused too (the document declares no body)', async () => {
    const res = await app.request('POST', '/customers/me/notifications/read-all', { token: customer.token, body: {} });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([refusedBody]);
    const without = await app.request('POST', '/customers/me/notifications/read-all', { token: customer.token });
    expect(without.status).toBe(200);
  });

  test('when any bodiless POST of the table is sent a body, then it answers 422 at body before its handler runs', async () => {
    const bodiless = ROUTES.filter((r) => r.method === 'post' && !r.body);
    expect(bodiless.length).toBeGreaterThan(5);
    const problems: string[] = [];
    for (const route of bodiless) {
      const token = route.access.kind === 'customer' ? customer.token : admin;
      // Path values of the right form, so only the body is wrong (none of them exists).
      const path = route.path.replace(/\{([a-z_]+)\}/g, (_m, name: string) =>
        /ticket|login|order_id|job_id/.test(name)
          ? '999999'
          : name === 'queue'
            ? 'webhooks'
            : '00000000-0000-4000-8000-000000000000',
      );
      const res = await app.request('POST', path, { token, body: { anything: true } });
      const detail = (res.body as { detail?: unknown }).detail;
      if (res.status !== 422 || !Array.isArray(detail) || !detail.some((d) => JSON.stringify(d) === JSON.stringify(refusedBody)))
        problems.push(`POST ${route.path}: ${res.status} ${res.text}`);
    }
    expect(problems).toEqual([]);
  });
});
