import { randomBytes } from 'node:crypto';
import type { Permission } from '../../src/domain/identity/permissions';
import type { TestApp } from './test-app';

/** The bootstrap admin every test app starts with (see startTestApp). */
export const ADMIN = { email: 'admin@broker.test', password: 'broker-desk-key-4471' };

export interface LoggedIn {
  id: string;
  email: string;
  password: string;
  token: string;
  refreshToken: string;
}

function unique(label: string): string {
  return `${label}-${randomBytes(4).toString('hex')}@broker.test`;
}

async function expectStatus<T>(res: { status: number; body: T }, status: number, what: string): Promise<T> {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function loginStaff(
  app: TestApp,
  email: string,
  password: string,
): Promise<{ access_token: string; refresh_token: string }> {
  return expectStatus(await app.request('POST', '/api/admin/users/login', { body: { email, password } }), 200, 'staff login');
}

export async function loginCustomer(
  app: TestApp,
  email: string,
  password: string,
): Promise<{ access_token: string; refresh_token: string }> {
  return expectStatus(await app.request('POST', '/api/customer/login', { body: { email, password } }), 200, 'customer login');
}

export async function adminToken(app: TestApp): Promise<string> {
  return (await loginStaff(app, ADMIN.email, ADMIN.password)).access_token;
}

/** A staff user holding exactly `permissions` (through a role of its own), logged in. */
export async function createStaff(app: TestApp, permissions: Permission[], admin?: string): Promise<LoggedIn> {
  const token = admin ?? (await adminToken(app));
  const role = await expectStatus(
    await app.request('POST', '/api/admin/roles', {
      token,
      body: { name: `role-${randomBytes(4).toString('hex')}`, permissions },
    }),
    201,
    'create role',
  );
  const email = unique('staff');
  const password = 'staff-password-123';
  const user = await expectStatus(
    await app.request('POST', '/api/admin/users', {
      token,
      body: { email, password, full_name: 'Test Staff', role_ids: [(role as { id: string }).id] },
    }),
    201,
    'create staff user',
  );
  const pair = await loginStaff(app, email, password);
  return { id: (user as { id: string }).id, email, password, token: pair.access_token, refreshToken: pair.refresh_token };
}

/** A customer, created by the admin and logged in. */
export async function createCustomer(app: TestApp, admin?: string): Promise<LoggedIn> {
  const token = admin ?? (await adminToken(app));
  const email = unique('customer');
  const password = 'customer-password-1';
  const customer = await expectStatus(
    await app.request('POST', '/api/crm/customers', {
      token,
      body: { email, password, first_name: 'Test', last_name: 'Customer' },
    }),
    201,
    'create customer',
  );
  const pair = await loginCustomer(app, email, password);
  return { id: (customer as { id: string }).id, email, password, token: pair.access_token, refreshToken: pair.refresh_token };
}
