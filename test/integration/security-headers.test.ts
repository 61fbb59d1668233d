import { adminToken } from '../helpers/identity';
import { startTestApp, type TestApp } from '../helpers/test-app';

let app: TestApp;
let token: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'headers', env: { ROLE: 'api' } });
  token = await adminToken(app);
});
afterAll(() => app?.stop());

describe('security headers', () => {
  test.each([
    ['a public JSON answer', 'GET', '/health', undefined],
    ['an authenticated answer', 'GET', '/groups', 'token'],
    ['a refusal', 'GET', '/groups', undefined],
    ['an unknown route', 'GET', '/no/such/route', undefined],
    ['a validation failure', 'POST', '/groups', 'token'],
    ['the OpenAPI document', 'GET', '/openapi.json', undefined],
  ])('when %s is served, then nosniff, no framing and a CSP that loads nothing are set', async (_what, method, path, auth) => {
    const res = await app.request(method, path, { token: auth ? token : undefined, body: method === 'POST' ? {} : undefined });
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none';frame-ancestors 'none'");
    expect(res.headers.get('x-powered-by')).toBeNull();
  });

  test('when anything is asked with a token or of a guarded route, then the answer is Cache-Control: no-store', async () => {
    for (const res of [
      await app.request('GET', '/groups', { token }),
      await app.request('GET', '/groups'),
      await app.request('GET', '/api/admin/settings', { token }),
      await app.request('POST', '/groups', { token, body: { name: '' } }),
      await app.request('GET', '/health', { token }),
    ]) {
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
  });

  test('when /docs is served, then it has a CSP that allows only its own assets, and cannot be framed', async () => {
    const res = await app.request('GET', '/docs');
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    // The page's scripts are files, never inline, so the CSP can forbid inline script.
    expect(res.text).not.toMatch(/<script>(?!<\/script>)/);
  });
});
