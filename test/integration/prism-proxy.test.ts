import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOpenApiDocument } from '../../src/api/openapi/openapi-document';
import { ROUTES } from '../../src/api/routes';
import { adminToken, createCustomer } from '../helpers/identity';
import { startTestApp, type TestApp } from '../helpers/test-app';
import { fundedAccount, setUpMarket } from '../helpers/trading';

/**
 * The check scripts/prism-check.sh runs must be able to fail. Here the app sits behind Prism
 * with a document that is wrong on purpose in both directions: it says an order's open_price
 * is text (the service answers a number), and that a group's description is at most 2
 * characters (the service takes more). Both must fail the request; a request the document
 * forbids and the service also refuses must not.
 */

let app: TestApp;
let dir: string;
let admin: string;
let login: number;
let groupId: string;

beforeAll(async () => {
  const doc = buildOpenApiDocument(ROUTES) as any;
  doc.components.schemas.Order.properties.open_price = { type: 'string' };
  doc.components.schemas.UpdateGroupRequest.properties.description = { type: 'string', maxLength: 2 };
  dir = mkdtempSync(join(tmpdir(), 'prism-'));
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
  app = await startTestApp({ label: 'prism-proxy', prismDocument: join(dir, 'openapi.json') });
  admin = await adminToken(app);
  const customer = await createCustomer(app, admin);
  ({ groupId } = await setUpMarket(app, admin));
  login = await fundedAccount(app, admin, customer.id, groupId);
}, 60_000);
afterAll(async () => {
  await app?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the Prism validation proxy in front of the service', () => {
  test('when an answer breaks the document, then the request fails naming the field', async () => {
    const opening = app.request('POST', '/orders', { token: admin, body: { login, symbol: 'EURUSD', cmd: 0, volume: 0.01 } });
    await expect(opening).rejects.toThrow(/POST \/orders answered 201: response\.body\.open_price/);
  });

  test('when the service accepts a request the document forbids, then the request fails', async () => {
    const patching = app.request('PATCH', `/groups/${groupId}`, { token: admin, body: { description: 'Retail USD' } });
    await expect(patching).rejects.toThrow(/answered 200: request\.body\.description/);
  });

  test('when the service refuses a request the document also forbids, then that is agreement, not a failure', async () => {
    const res = await app.request('POST', '/orders', { token: admin, body: { login, symbol: 'EURUSD', cmd: 0, volume: 0 } });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'volume'], type: 'greater_than' });
  });
});
