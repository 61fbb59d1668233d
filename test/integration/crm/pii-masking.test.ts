import { parse } from 'csv-parse/sync';
import { randomBytes } from 'node:crypto';
import { adminToken, createStaff, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';

/**
 * Personal data for staff without view_customer_pii: the email and the phone masked alike in
 * the customer answers and in the CSV export, and whole for staff who hold the permission.
 */
jest.setTimeout(90_000);

let app: TestApp;
let admin: string;
let clerk: LoggedIn;
let lead: { id: string; email: string; phone: string };

beforeAll(async () => {
  app = await startTestApp({ label: 'pii-masking', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  clerk = await createStaff(app, ['view_customers'], admin);
  const email = `pii-${randomBytes(4).toString('hex')}@example.com`;
  const res = await app.request('POST', '/api/crm/leads', {
    token: admin,
    body: { email, first_name: 'Jane', last_name: '=HYPERLINK("x")', phone: '+441234567812' },
  });
  expect(res.status).toBe(201);
  lead = { id: res.body.id, email, phone: '+441234567812' };
});
afterAll(() => app?.stop());

async function exportCsv(token: string): Promise<{ status: number; type: string | null; rows: Record<string, string>[] }> {
  const res = await fetch(`${app.baseUrl}/api/crm/customers/export?email=${encodeURIComponent(lead.email)}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type'), rows: parse(text, { columns: true }) };
}

test('when staff without view_customer_pii read a customer, then the phone keeps its first 3 and last 2 characters, like the masked email', async () => {
  const seen = await app.request('GET', `/api/crm/customers/${lead.id}`, { token: clerk.token });
  expect(seen.status).toBe(200);
  expect(seen.body).toMatchObject({ email: `p***@example.com`, phone: '+44******12' });
  const listed = await app.request('GET', `/api/crm/customers?email=${encodeURIComponent(lead.email)}`, { token: clerk.token });
  expect(listed.body.items).toEqual([expect.objectContaining({ email: 'p***@example.com', phone: '+44******12' })]);
  const whole = await app.request('GET', `/api/crm/customers/${lead.id}`, { token: admin });
  expect(whole.body).toMatchObject({ email: lead.email, phone: lead.phone });
});

test('when staff without view_customer_pii export customers as CSV, then email and phone are masked; with it they are whole', async () => {
  const masked = await exportCsv(clerk.token);
  expect(masked.status).toBe(200);
  expect(masked.type).toBe('text/csv; charset=utf-8');
  // A text cell a spreadsheet would read as a formula (a leading + or =) is written with a ' in front.
  expect(masked.rows).toEqual([
    expect.objectContaining({ id: lead.id, email: 'p***@example.com', phone: "'+44******12", first_name: 'Jane' }),
  ]);
  expect(masked.rows[0]!.last_name).toBe(`'=HYPERLINK("x")`);
  const whole = await exportCsv(admin);
  expect(whole.rows).toEqual([expect.objectContaining({ id: lead.id, email: lead.email, phone: `'${lead.phone}` })]);
  const audits = await sql<{ after: { pii: boolean } }>(
    app,
    `select after from audit_entries where action = 'customers.exported' order by created_at`,
  );
  expect(audits.map((a) => a.after.pii)).toEqual([false, true]);
});

test('when a staff user with a narrower scope exports, then customers outside it are not in the file', async () => {
  const own = await createStaff(app, ['view_customers', 'view_customer_pii'], admin);
  expect((await app.request('PATCH', `/api/admin/users/${own.id}`, { token: admin, body: { data_scope: 'own' } })).status).toBe(
    200,
  );
  const file = await exportCsv(own.token);
  expect(file.status).toBe(200);
  expect(file.rows).toEqual([]);
});
