import { ADMIN } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { compileTrust } from '../../../src/platform/client-address';
import { loadConfig, ConfigError } from '../../../src/config/config';

/**
 * X-Forwarded-For names the client only through proxies TRUST_PROXY names, and only when every
 * hop in it is an IP address; otherwise the socket address counts. The session list shows
 * which address the login was recorded under.
 */
async function loginFrom(app: TestApp, forwardedFor?: string): Promise<string | null> {
  const headers: Record<string, string> = forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor };
  const res = await app.request('POST', '/api/admin/users/login', {
    body: { email: ADMIN.email, password: ADMIN.password },
    headers,
  });
  expect(res.status).toBe(200);
  const sessions = await app.request('GET', '/auth/sessions', { token: res.body.access_token });
  return sessions.body.items.find((s: { current: boolean }) => s.current).ip;
}

describe('with the default TRUST_PROXY (loopback: the test client connects through it)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ label: 'clientaddr', env: { ROLE: 'api' } });
  });
  afterAll(() => app?.stop());

  test('when X-Forwarded-For holds an IP address, then it is the client', async () => {
    expect(await loginFrom(app, '203.0.113.9')).toBe('203.0.113.9');
    expect(await loginFrom(app, '2001:db8::1')).toBe('2001:db8::1');
  });

  test('when X-Forwarded-For holds anything that is not an IP address, then the socket address is used', async () => {
    for (const value of ['not-an-ip', '203.0.113.9, evil', '999.1.1.1', '', '203.0.113.9;drop', 'unknown']) {
      expect(await loginFrom(app, value)).toBe('127.0.0.1');
    }
  });

  test('when there is no X-Forwarded-For, then the socket address is used, written as plain IPv4', async () => {
    expect(await loginFrom(app)).toBe('127.0.0.1');
  });
});

describe('with TRUST_PROXY=none', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ label: 'clientaddr-none', env: { ROLE: 'api', TRUST_PROXY: 'none' } });
  });
  afterAll(() => app?.stop());

  test('when a client sends X-Forwarded-For, then it is ignored: a client cannot choose its throttle key', async () => {
    expect(await loginFrom(app, '203.0.113.9')).toBe('127.0.0.1');
  });
});

describe('TRUST_PROXY values', () => {
  test('when it is a list, a hop count or none, then it compiles; true or garbage stops start-up naming the variable', () => {
    expect(compileTrust('loopback, 10.0.0.0/8')('10.1.2.3', 0)).toBe(true);
    expect(compileTrust('loopback, 10.0.0.0/8')('203.0.113.1', 0)).toBe(false);
    expect(compileTrust('2')('203.0.113.1', 1)).toBe(true);
    expect(compileTrust('2')('203.0.113.1', 2)).toBe(false);
    expect(compileTrust('none')('127.0.0.1', 0)).toBe(false);
    for (const bad of ['true', 'not a range', '10.0.0.0/99']) {
      try {
        loadConfig({ TRUST_PROXY: bad });
        throw new Error(`TRUST_PROXY=${bad} was accepted`);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        expect((err as ConfigError).problems.some((p) => p.startsWith('TRUST_PROXY:'))).toBe(true);
      }
    }
  });
});
