import { adminToken, createCustomer } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, setUpMarket } from '../../helpers/trading';

let app: TestApp;
let token: string;
let login: number;
beforeAll(async () => {
  app = await startTestApp({ label: 'idem', env: { ROLE: 'api' } });
  token = await adminToken(app);
  const market = await setUpMarket(app, token);
  const customer = await createCustomer(app, token);
  login = await fundedAccount(app, token, customer.id, market.groupId, 0);
});
afterAll(() => app?.stop());
afterEach(() => expectLedgerBalanced(app));

const deposit = (key: string | undefined, amount: number) =>
  app.request('POST', `/api/backoffice/accounts/${login}/deposits`, {
    token,
    body: { amount },
    headers: key ? { 'idempotency-key': key } : {},
  });

async function balance(): Promise<string> {
  return (await app.request('GET', `/api/crm/accounts/${login}`, { token })).body.balance;
}

describe('Idempotency-Key on deposits', () => {
  test('when the same key and body come twice, then the first answer is replayed and money moves once', async () => {
    const before = Number(await balance());
    const first = await deposit('dep-001', 25);
    const second = await deposit('dep-001', 25);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(Number(await balance())).toBe(before + 25);
  });

  test('when the same key comes with another body, then 422 at the header and nothing moves', async () => {
    await deposit('dep-002', 10);
    const before = await balance();
    const res = await deposit('dep-002', 11);
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['header', 'Idempotency-Key']);
    expect(await balance()).toBe(before);
  });

  test('when the same key races, then exactly one request moves money and the others replay it or see it in flight', async () => {
    const before = Number(await balance());
    const results = await Promise.all(Array.from({ length: 8 }, () => deposit('dep-race', 7)));
    const statuses = results.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    expect(new Set(results.filter((r) => r.status === 201).map((r) => r.body.id)).size).toBe(1);
    expect(Number(await balance())).toBe(before + 7);
  });

  test('when a request with a key fails validation of its business rules, then the key is free again', async () => {
    const bad = await app.request('POST', '/api/backoffice/accounts/999999999/deposits', {
      token,
      body: { amount: 5 },
      headers: { 'idempotency-key': 'dep-404' },
    });
    expect(bad.status).toBe(404);
    const again = await app.request('POST', '/api/backoffice/accounts/999999999/deposits', {
      token,
      body: { amount: 5 },
      headers: { 'idempotency-key': 'dep-404' },
    });
    expect(again.status).toBe(404);
  });

  test('when no key is sent, then each request moves money', async () => {
    const before = Number(await balance());
    await deposit(undefined, 1);
    await deposit(undefined, 1);
    expect(Number(await balance())).toBe(before + 2);
  });
});
