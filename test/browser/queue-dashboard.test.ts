import { execFileSync } from 'node:child_process';
import { Job } from 'bullmq';
import { chromium, type Browser, type Page } from 'playwright-core';
import { SimulatorTickJob } from '../../src/jobs/simulator-tick.job';
import { ADMIN, adminToken, createStaff, type LoggedIn } from '../helpers/identity';
import { sql, startTestApp, waitFor, type TestApp } from '../helpers/test-app';
import { flakyPriceFeed } from '../helpers/flaky-feed';

jest.setTimeout(120_000);

/**
 * The queue dashboard in a real browser: Debian's chromium package driven by playwright-core
 * (never a downloaded browser build). .ci/run installs chromium; where it is missing (a
 * laptop without it), this file says so and skips.
 */
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
if (!CHROMIUM) console.warn('queue dashboard browser test skipped: no chromium (apt-get install chromium)');

const { feed, processors } = flakyPriceFeed();

let app: TestApp;
let browser: Browser;
let viewer: LoggedIn;

beforeAll(async () => {
  if (!CHROMIUM) return;
  app = await startTestApp({ label: 'dashboard', processors });
  viewer = await createStaff(app, ['view_queues'], await adminToken(app));
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
});
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function failedTick(): Promise<string> {
  const job = await app.runtime.services.jobs.enqueue(SimulatorTickJob, { symbols: ['FEED'], volatility_bps: 1 });
  await waitFor(
    'the tick to fail',
    async () => (await Job.fromId(app.runtime.services.jobs.queue('simulator'), job.id!))?.failedReason,
  );
  return job.id!;
}

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto(`${app.baseUrl}/admin/queues`);
  expect(new URL(page.url()).pathname).toBe('/admin/login');
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', password);
  await Promise.all([page.waitForURL(`${app.baseUrl}/admin/queues`), page.click('button[type=submit]')]);
}

const stateOf = async (id: string) => (await Job.fromId(app.runtime.services.jobs.queue('simulator'), id))!.getState();
/** The job page's retry button, then bull-board's "Are you sure?" dialog. */
async function pressRetry(page: Page): Promise<void> {
  await page.locator('button:has(svg.lucide-refresh-cw)').first().click();
  await page.getByRole('alertdialog').getByRole('button', { name: 'Confirm' }).click();
}

describeWithBrowser('the queue dashboard in a browser', () => {
  test('when nobody is signed in, then the dashboard and its API send the visitor to the login page', async () => {
    const page = await browser.newPage();
    await page.goto(`${app.baseUrl}/admin/queues/queue/simulator`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
    expect(await page.textContent('h1')).toContain('Trading queues');
    const api = await page.request.get(`${app.baseUrl}/admin/queues/api/queues`);
    expect(api.status()).toBe(401);
    await page.close();
  });

  test('when an admin signs in, then the queues show with their counts, and a failed job opened and retried completes', async () => {
    const id = await failedTick();
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, ADMIN.email, ADMIN.password);
    for (const queue of ['mail', 'simulator', 'bulk-close', 'orders', 'events'])
      await page.getByText(queue, { exact: true }).first().waitFor();
    await page.getByText('FAILED').first().waitFor();

    await page.goto(`${app.baseUrl}/admin/queues/queue/simulator/${id}`);
    await page.getByText('price feed down').first().waitFor();
    feed.down = false;
    const [retried] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'PUT' && r.url().includes(`/${id}/retry`)),
      pressRetry(page),
    ]);
    expect(retried.status()).toBe(204);
    await waitFor('the retried job to complete', async () => (await stateOf(id)) === 'completed');
    await page.reload();
    await page.getByText('Finished at').first().waitFor();

    const audit = await sql<{ action: string }>(
      app,
      "select action from audit_entries where entity_type = 'queue' order by created_at",
    );
    expect(audit.map((a) => a.action)).toContain('queue.jobs.retried');
    await context.close();
  });

  test('when a manager opens a failed job and the queue menu, then retry and clean show but adding and editing jobs do not, and a forced add is refused', async () => {
    feed.down = true;
    const id = await failedTick();
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, ADMIN.email, ADMIN.password);
    await page.goto(`${app.baseUrl}/admin/queues/queue/simulator/${id}`);
    await page.getByText('price feed down').first().waitFor();
    await page.locator('button:has(svg.lucide-refresh-cw)').first().waitFor();
    // bull-board renders the controls; the dashboard's stylesheet hides them.
    for (const icon of ['pencil', 'files']) {
      const control = page.locator(`li:has(svg.lucide-${icon})`);
      expect(await control.count()).toBe(1);
      expect(await control.isVisible()).toBe(false);
    }

    await page.goto(`${app.baseUrl}/admin/queues/queue/simulator?status=failed`);
    await page.locator('button:has(svg.lucide-ellipsis-vertical)').first().click();
    await page.getByRole('menuitem', { name: /Retry all/i }).waitFor();
    expect(await page.getByRole('menuitem', { name: /Empty/i }).isVisible()).toBe(true);
    for (const name of [/Add job/i, /Pause/i, /Set concurrency/i, /Set rate limit/i, /Obliterate/i]) {
      const item = page.locator('[role=menuitem]', { hasText: name });
      expect(await item.count()).toBe(1);
      expect(await item.isVisible()).toBe(false);
    }

    const jobs = async () =>
      Object.values(await app.runtime.services.jobs.queue('simulator').getJobCounts()).reduce((a, b) => a + b, 0);
    const before = await jobs();
    // What the hidden "Add job" form would send, from the page itself (its cookie and origin).
    const status = await page.evaluate(async () => {
      const res = await fetch('/admin/queues/api/queues/simulator/add', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'simulator-tick', data: { symbols: ['FEED'], volatility_bps: 4400 }, options: {} }),
      });
      return res.status;
    });
    expect(status).toBe(403);
    expect(await jobs()).toBe(before);
    await context.close();
  });

  test('when a viewer presses retry, then the server refuses it and the job stays failed', async () => {
    feed.down = true;
    const id = await failedTick();
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, viewer.email, viewer.password);
    await page.goto(`${app.baseUrl}/admin/queues/queue/simulator/${id}`);
    await page.getByText('price feed down').first().waitFor();
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'PUT' && r.url().includes(`/${id}/retry`)),
      pressRetry(page),
    ]);
    expect(refused.status()).toBe(403);
    expect(await stateOf(id)).toBe('failed');
    await context.close();
  });

  test('when the user signs out, then the session is revoked and the cookie no longer opens the dashboard', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, ADMIN.email, ADMIN.password);
    const cookie = (await context.cookies()).find((c) => c.name === 'admin_session')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/admin', secure: true });
    await page.goto(`${app.baseUrl}/admin/logout`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
    // The old cookie value, replayed, is refused: the session itself was revoked.
    const replay = await fetch(`${app.baseUrl}/admin/queues/api/queues`, {
      headers: { cookie: `admin_session=${cookie.value}` },
    });
    expect(replay.status).toBe(401);
    await context.close();
  });
});
