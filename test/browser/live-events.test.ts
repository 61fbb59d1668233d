import { execFileSync } from 'node:child_process';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ADMIN, adminToken, createCustomer, createStaff } from '../helpers/identity';
import { startTestApp, type TestApp } from '../helpers/test-app';
import { fundedAccount, openOrder, setUpMarket } from '../helpers/trading';

jest.setTimeout(120_000);

/** /admin/live in Debian's chromium driven by playwright-core; skipped (with a warning) where chromium is missing. */
function findChromium(): string | undefined {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  try {
    return execFileSync('which', ['chromium'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}
const CHROMIUM = findChromium();
const describeWithBrowser = CHROMIUM ? describe : describe.skip;
if (!CHROMIUM) console.warn('live events browser test skipped: no chromium (apt-get install chromium)');

let app: TestApp;
let browser: Browser;

beforeAll(async () => {
  if (!CHROMIUM) return;
  app = await startTestApp({ label: 'live-page', env: { OUTBOX_RELAY_INTERVAL_MS: '250' } });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
});
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto(`${app.baseUrl}/admin/live`);
  expect(new URL(page.url()).pathname).toBe('/admin/login');
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', password);
  // Signing in comes back to the page that sent the browser to the sign-in form.
  await Promise.all([page.waitForURL(`${app.baseUrl}/admin/live`), page.click('button[type=submit]')]);
}

describeWithBrowser('the live events page in a browser', () => {
  test('when an order is opened through the API, then it appears on the page within 2 s', async () => {
    const admin = await adminToken(app);
    const { groupId } = await setUpMarket(app, admin);
    const customer = await createCustomer(app, admin);
    const login = await fundedAccount(app, admin, customer.id, groupId);
    const page = await browser.newPage();
    await signIn(page, ADMIN.email, ADMIN.password);
    await page.locator('#status', { hasText: /^live$/ }).waitFor({ timeout: 10_000 });
    const started = Date.now();
    const order = await openOrder(app, admin, login);
    const row = page.locator('#events tr[data-type="order.opened"]', { hasText: `order ${order}` });
    await row.waitFor({ timeout: 2000 });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await row.locator('td').nth(2).textContent()).toBe(String(login));
    await page.close();
  });

  test('when a type filter is chosen, then only events of that type are listed', async () => {
    const admin = await adminToken(app);
    const { groupId } = await setUpMarket(app, admin);
    const customer = await createCustomer(app, admin);
    const login = await fundedAccount(app, admin, customer.id, groupId);
    const page = await browser.newPage();
    await signIn(page, ADMIN.email, ADMIN.password);
    await page.selectOption('#types', ['order.closed']);
    await page.locator('#status', { hasText: /^live$/ }).waitFor({ timeout: 10_000 });
    const order = await openOrder(app, admin, login);
    const closed = await app.request('POST', `/orders/${order}/close`, { token: admin, body: {} });
    expect([200, 201]).toContain(closed.status);
    await page.locator('#events tr[data-type="order.closed"]').first().waitFor({ timeout: 5000 });
    expect(await page.locator('#events tr[data-type="order.opened"]').count()).toBe(0);
    await page.close();
  });

  test('when staff without view_events or nobody opens the page, then it is refused', async () => {
    const viewer = await createStaff(app, ['view_queues'], await adminToken(app));
    const page = await browser.newPage();
    await signIn(page, viewer.email, viewer.password);
    expect(await page.textContent('body')).toContain('Missing permission view_events');
    const ticket = await page.request.post(`${app.baseUrl}/admin/live/ticket`, { headers: { origin: app.baseUrl } });
    expect(ticket.status()).toBe(403);
    await page.close();
    const anonymous = await browser.newPage();
    expect((await anonymous.request.post(`${app.baseUrl}/admin/live/ticket`)).status()).toBe(401);
    await anonymous.close();
  });
});
