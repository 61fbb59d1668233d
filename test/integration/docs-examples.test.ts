import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import { seedDemo } from '../../src/demo/seed-demo';
import { adminToken } from '../helpers/identity';
import { startTestApp, type TestApp } from '../helpers/test-app';

/**
 * The README's curl sessions are run as written, with bash, curl and jq, against a service
 * holding the demo data (what `npm run demo` seeds): a newcomer who copies one gets what it
 * says, and a step that fails ends the script with a message instead of a loop that never ends.
 */
jest.setTimeout(120_000);

let app: TestApp;
let customer: { email: string; password: string; login: number };

beforeAll(async () => {
  app = await startTestApp({ label: 'docs' });
  const token = await adminToken(app);
  customer = await seedDemo(async (method, path, body) => {
    const res = await app.request(method, path, { token, ...(body === undefined ? {} : { body }) });
    return { status: res.status, body: res.body };
  }, app.runtime.services.orm.em.fork() as EntityManager);
});
afterAll(async () => {
  if (!app) return;
  // The demo starts the random walk; stop it before the queues go.
  await app.request('PUT', '/simulator/random-walk', { token: await adminToken(app), body: { enabled: false } });
  await app.stop();
});

/** The first `sh` block after a heading of the README. */
async function readmeBlock(heading: string): Promise<string> {
  const text = await readFile(join(__dirname, '..', '..', 'README.md'), 'utf8');
  const at = text.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`README has no heading ${heading}`);
  const match = /```sh\n([\s\S]*?)```/.exec(text.slice(at));
  if (!match) throw new Error(`no sh block after ${heading}`);
  return match[1]!;
}

function runBash(
  script: string,
  env: Record<string, string>,
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['--norc', '--noprofile', '-c', script],
      { cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, timeout: 90_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('README: a statement, by curl', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'readme-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  test('when it runs with the demo customer, then it downloads this month’s statement as a PDF', async () => {
    const script = await readmeBlock('### A statement, by curl');
    const env = { API: app.baseUrl, EMAIL: customer.email, PASSWORD: customer.password, LOGIN: String(customer.login) };
    const run = await runBash(script, env, dir);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const files = await readdir(dir);
    expect(files).toEqual([
      expect.stringMatching(new RegExp(`^account-statement-${customer.login}-\\d{4}-\\d\\d-01-\\d{4}-\\d\\d-\\d\\d\\.pdf$`)),
    ]);
    expect((await readFile(join(dir, files[0]!))).subarray(0, 5).toString('latin1')).toBe('%PDF-');
  });

  test('when its password or account is wrong, then it stops at once with a message, never waiting forever', async () => {
    const script = await readmeBlock('### A statement, by curl');
    const started = Date.now();
    const badPassword = await runBash(
      script,
      { API: app.baseUrl, EMAIL: customer.email, PASSWORD: 'not-the-password', LOGIN: String(customer.login) },
      dir,
    );
    expect(badPassword.code).not.toBe(0);
    expect(badPassword.stderr).toContain('login failed');
    const badLogin = await runBash(
      script,
      { API: app.baseUrl, EMAIL: customer.email, PASSWORD: customer.password, LOGIN: '1' },
      dir,
    );
    expect(badLogin.code).not.toBe(0);
    expect(badLogin.stderr).toContain('the statement was refused');
    const unset = await runBash(script, { API: app.baseUrl }, dir);
    expect(unset.code).not.toBe(0);
    expect(unset.stderr).toContain('npm run demo');
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(await readdir(dir)).toEqual([]);
  });
});
