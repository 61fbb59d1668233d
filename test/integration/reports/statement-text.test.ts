import { randomUUID } from 'node:crypto';
import { adminToken } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { fundedAccount, openOrder, setQuote, setUpMarket } from '../../helpers/trading';
import { expectOk } from '../trading/trading-kit';
import { buildReport, pageText } from './report-kit';

/**
 * What a customer reads in its PDF statement: its name in whatever script it is written in
 * (the text layer gives it back, so it was drawn with real glyphs, not Latin-1 garbage), and
 * the side of each order as a word in its language, never a numeric command.
 */
jest.setTimeout(180_000);

let app: TestApp;
let admin: string;
let groupId: string;

const today = () => new Date().toISOString().slice(0, 10);

async function customerNamed(first: string, last: string, locale = 'en'): Promise<string> {
  const created = expectOk(
    await app.request('POST', '/api/crm/customers', {
      token: admin,
      body: {
        email: `script-${randomUUID()}@example.com`,
        password: 'customer-password-1',
        first_name: first,
        last_name: last,
        locale,
      },
    }),
    201,
    'create customer',
  );
  return created.id as string;
}

async function statementText(login: number): Promise<string> {
  const { report, bytes } = await buildReport(app, admin, {
    type: 'account_statement',
    format: 'pdf',
    params: { login, from: today(), to: today() },
  });
  expect(report).toMatchObject({ status: 'completed', error: null });
  return pageText(bytes, 1);
}

beforeAll(async () => {
  app = await startTestApp({ label: 'statement-text' });
  admin = await adminToken(app);
  groupId = (await setUpMarket(app, admin)).groupId;
});
afterAll(() => app?.stop());

describe('names in any script', () => {
  test.each([
    ['Cyrillic', 'Иван', 'Петров'],
    ['Greek', 'Ελένη', 'Παπαδοπούλου'],
    ['Arabic', 'محمد', 'العلي'],
    ['Chinese', '王', '伟'],
    ['Japanese', '山田', 'はなこ'],
  ])('when the holder is named in %s, then the PDF text layer gives the name back', async (_script, first, last) => {
    const login = await fundedAccount(app, admin, await customerNamed(first, last), groupId, 100);
    const text = await statementText(login);
    // Words, whatever order a reader of a right-to-left script puts them in.
    expect(text).toContain(first);
    expect(text).toContain(last);
    expect(text).toContain(`${login}`);
  });

  test('when a name mixes Latin and Arabic, then both words come back', async () => {
    const login = await fundedAccount(app, admin, await customerNamed('Omar', 'الفاروق'), groupId, 100);
    const text = await statementText(login);
    expect(text).toContain('Omar');
    expect(text).toContain('الفاروق');
  });
});

describe('the side of an order', () => {
  test('when an English and a German customer read their statements, then they see Buy and Sell, or Kauf and Verkauf, never a cmd', async () => {
    const cases = [
      ['en', 'Buy', 'Sell'],
      ['de', 'Kauf', 'Verkauf'],
    ] as const;
    for (const [locale, buy, sell] of cases) {
      const login = await fundedAccount(app, admin, await customerNamed('Anna', 'Keller', locale), groupId, 10_000);
      const bought = await openOrder(app, admin, login, 0, 0.1);
      await setQuote(app, admin, 'EURUSD', 1.1012, 1.1014);
      expectOk(await app.request('POST', `/orders/${bought}/close`, { token: admin }), 200, 'close');
      await openOrder(app, admin, login, 1, 0.05);
      const text = await statementText(login);
      expect(text).not.toMatch(/\bCmd\b/);
      const closed = text.split('\n').find((l) => l.includes('EURUSD') && l.includes('0.1 '));
      const open = text.split('\n').find((l) => l.includes('EURUSD') && l.includes('0.05'));
      expect(closed).toMatch(new RegExp(`EURUSD\\s+${buy}\\s`));
      expect(open).toMatch(new RegExp(`EURUSD\\s+${sell}\\s`));
    }
  });
});
