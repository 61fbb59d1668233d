import { ADMIN, createStaff } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ label: 'knownaddr', env: { ROLE: 'api' } });
});
afterAll(() => app?.stop());

const login = (password: string, address: string) =>
  app.request('POST', '/api/admin/users/login', {
    body: { email: ADMIN.email, password },
    headers: { 'x-forwarded-for': address },
  });

test('when strangers spend the account-wide failure budget, then the owner still logs in from a known address but a new one waits', async () => {
  expect((await login(ADMIN.password, '10.9.9.9')).status).toBe(200);
  // 20 addresses × 5 failures: the per-address-and-account limit never trips, the account-wide one does.
  for (let a = 0; a < 20; a++) {
    const results = await Promise.all(Array.from({ length: 5 }, () => login('wrong-password', `203.0.113.${a + 1}`)));
    expect(results.every((r) => r.status === 401)).toBe(true);
  }
  const known = await login(ADMIN.password, '10.9.9.9');
  expect(known.status).toBe(200);
  expect(known.headers.get('cache-control')).toBe('no-store');
  const fresh = await login(ADMIN.password, '198.51.100.7');
  expect(fresh.status).toBe(429);
  expect(Number(fresh.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(Number(fresh.headers.get('retry-after'))).toBeLessThanOrEqual(900);
});

test('when strangers behind the owner’s address fail on other accounts past the address limit, then the owner still logs in there', async () => {
  // Its own account: the test above spent the admin's account-wide budget.
  const owner = await createStaff(app, ['view_audit'], await loginStaff(app, ADMIN.email, ADMIN.password, '10.9.9.9'));
  const shared = '10.7.7.7';
  const ownerLogin = () =>
    app.request('POST', '/api/admin/users/login', {
      body: { email: owner.email, password: owner.password },
      headers: { 'x-forwarded-for': shared },
    });
  expect((await ownerLogin()).status).toBe(200);
  // 30 failures across other accounts from the shared address: the address-wide block trips for strangers...
  for (let i = 0; i < 30; i++) {
    const res = await app.request('POST', '/api/admin/users/login', {
      body: { email: `nobody-${i}@broker.test`, password: 'wrong-password' },
      headers: { 'x-forwarded-for': shared },
    });
    expect(res.status).toBe(401);
  }
  const stranger = await app.request('POST', '/api/admin/users/login', {
    body: { email: 'someone-else@broker.test', password: 'wrong-password' },
    headers: { 'x-forwarded-for': shared },
  });
  expect(stranger.status).toBe(429);
  // ...but not for the account that has logged in from there.
  expect((await ownerLogin()).status).toBe(200);
});

async function loginStaff(app: TestApp, email: string, password: string, address: string): Promise<string> {
  const res = await app.request('POST', '/api/admin/users/login', {
    body: { email, password },
    headers: { 'x-forwarded-for': address },
  });
  expect(res.status).toBe(200);
  return res.body.access_token;
}
