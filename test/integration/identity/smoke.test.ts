import { adminToken, createCustomer, createStaff } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ label: 'idsmoke' });
});
afterAll(() => app?.stop());

test('when the admin creates staff and customers, then each can log in and reach its own family only', async () => {
  const admin = await adminToken(app);
  const staff = await createStaff(app, ['view_customers'], admin);
  const customer = await createCustomer(app, admin);
  expect((await app.request('GET', `/api/crm/customers/${customer.id}`, { token: staff.token })).status).toBe(200);
  expect((await app.request('GET', '/api/customer/me', { token: customer.token })).body.email).toBe(customer.email);
  expect((await app.request('GET', '/api/customer/me', { token: staff.token })).status).toBe(403);
  expect((await app.request('GET', `/api/crm/customers/${customer.id}`, { token: customer.token })).status).toBe(403);
  expect(
    (await app.request('POST', '/api/admin/roles', { token: staff.token, body: { name: 'x', permissions: [] } })).status,
  ).toBe(403);
  const none = await app.request('GET', '/api/customer/me');
  expect(none.status).toBe(401);
  expect(none.headers.get('www-authenticate')).toBe('Bearer');
  const sessions = await app.request('GET', '/auth/sessions', { token: customer.token });
  expect(sessions.body.items).toHaveLength(1);
  expect(sessions.body.items[0].current).toBe(true);
  expect((await app.request('DELETE', `/auth/sessions/${sessions.body.items[0].id}`, { token: customer.token })).status).toBe(
    204,
  );
  expect((await app.request('GET', '/api/customer/me', { token: customer.token })).status).toBe(401);
});
