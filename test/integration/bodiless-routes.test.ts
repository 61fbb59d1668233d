import { ROUTES } from '../../src/api/routes';
import { adminToken, createCustomer, type LoggedIn } from '../helpers/identity';
import { sql, startTestApp, type TestApp } from '../helpers/test-app';
import { fundedAccount, openOrder, setUpMarket } from '../helpers/trading';

/**
 * Routes that take no fields, two families:
 * - trading and money routes refuse any field (a `{"volume": 0.05}` sent to a close, hoping
 *   for a partial close, would otherwise close the whole position);
 * - every other bodiless POST ignores a body, as other routes ignore unknown fields, and the
 *   document declares that optional, ignored body so a validating proxy agrees.
 */

let app: TestApp;
let admin: string;
let customer: LoggedIn;
let login: number;

beforeAll(async () => {
  app = await startTestApp({ label: 'bodiless-routes', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  customer = await createCustomer(app, admin);
  const { groupId } = await setUpMarket(app, admin);
  login = await fundedAccount(app, admin, customer.id, groupId);
});
afterAll(() => app?.stop());

describe('routes that take no fields', () => {
  test('when a close carries a field, then it is 422 extra_forbidden at that field and the order stays open', async () => {
    const ticket = await openOrder(app, customer.token, login, 0, 0.1);
    const res = await app.request('POST', `/orders/${ticket}/close`, { token: customer.token, body: { volume: 0.05 } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'volume'], type: 'extra_forbidden' })]);
    const [row] = await sql<{ status: string }>(app, 'select status from orders where ticket = ?', [ticket]);
    expect(row?.status).toBe('open');

    const closed = await app.request('POST', `/orders/${ticket}/close`, { token: customer.token, body: {} });
    expect(closed.status).toBe(200);
    expect(closed.body.status).toBe('closed');
  });

  test('when an empty JSON object or a stray field is sent to a bodiless POST outside trading, then it is ignored', async () => {
    const empty = await app.request('POST', '/customers/me/notifications/read-all', { token: customer.token, body: {} });
    expect(empty.status).toBe(200);
    const stray = await app.request('POST', '/customers/me/notifications/read-all', {
      token: customer.token,
      body: { all: true },
    });
    expect(stray.status).toBe(200);
  });

  test('when the document is read, then every bodiless POST declares an optional body', async () => {
    const bodiless = ROUTES.filter((r) => r.method === 'post' && !r.body && !r.requestBody);
    expect(bodiless.length).toBeGreaterThan(5);
    const res = await app.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    const paths = (res.body as { paths: Record<string, Record<string, { requestBody?: { required?: boolean } }>> }).paths;
    const undeclared = bodiless.filter((r) => paths[r.path]?.post?.requestBody?.required !== false).map((r) => r.path);
    expect(undeclared).toEqual([]);
  });
});
