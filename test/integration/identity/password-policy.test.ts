import { randomBytes } from 'node:crypto';
import { passwordProblem } from '../../../src/domain/identity/password-policy';
import { loadConfig, ConfigError } from '../../../src/config/config';
import { adminToken } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';

let app: TestApp;
let token: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'pwpolicy', env: { ROLE: 'api' } });
  token = await adminToken(app);
});
afterAll(() => app?.stop());

const suffix = () => randomBytes(3).toString('hex');

describe('the password policy', () => {
  test.each([
    ['a common password', 'password1234', /too easy to guess/],
    ['a keyboard walk', 'qwertyuiop123', /too easy to guess/],
    ['one character repeated', 'aaaaaaaaaaaaaaa', /one character repeated/],
    ['the email local part', 'margaret.hale', /must not contain the email/],
    ['the local part inside it', 'Margaret.Hale-2026!', /must not contain the email/],
  ])(
    'when a customer is created with %s, then 422 at body.password with a sentence and nothing is stored',
    async (_what, password, why) => {
      const email = `margaret.hale@broker${suffix()}.test`;
      const res = await app.request('POST', '/api/crm/customers', {
        token,
        body: { email, password, first_name: 'Margaret', last_name: 'Hale' },
      });
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual([{ loc: ['body', 'password'], msg: expect.stringMatching(why), type: 'value_error' }]);
      expect(await sql(app, 'select 1 from customers where email = ?', [email])).toHaveLength(0);
    },
  );

  test('when a staff user is created with a weak password, then 422 at body.password', async () => {
    const res = await app.request('POST', '/api/admin/users', {
      token,
      body: { email: `desk-${suffix()}@broker.test`, password: 'iloveyou1234', full_name: 'Desk Clerk', role_ids: [] },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['body', 'password']);
  });

  test('when a strong password is used, then 201', async () => {
    const res = await app.request('POST', '/api/crm/customers', {
      token,
      body: { email: `ok-${suffix()}@broker.test`, password: 'amber-ferry-lantern-47', first_name: 'Ok', last_name: 'Customer' },
    });
    expect(res.status).toBe(201);
  });

  test('when the names of the account are the password, then it is too easy to guess', () => {
    expect(passwordProblem('MargaretHale1', { email: 'mh@broker.test', names: ['Margaret', 'Hale'] })).toMatch(/too easy/);
  });

  test('when the bootstrap admin password is weak, then start-up stops naming the variable', () => {
    try {
      loadConfig({ BOOTSTRAP_ADMIN_EMAIL: 'root@broker.test', BOOTSTRAP_ADMIN_PASSWORD: 'password12345' });
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems).toEqual([
        expect.stringMatching(/^BOOTSTRAP_ADMIN_PASSWORD: The password is too easy/),
      ]);
      expect((err as ConfigError).message).not.toContain('password12345');
    }
  });
});
