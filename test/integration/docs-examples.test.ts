import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import { seedDemo } from '../../src/demo/seed-demo';
import { FILES } from './compliance/compliance-kit';
import { adminToken } from '../helpers/identity';
import { startTestApp, type TestApp } from '../helpers/test-app';

/**
 * The curl sessions of the README and docs/ are run as written, with bash, curl and jq, against
 * a service holding the demo data (what `npm run demo` seeds): a newcomer who copies one gets
 * what it says, and a step that fails ends the script with a message instead of a loop that
 * never ends.
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

/** The `sh` blocks after a line of a document (the README by default), up to the next heading of its level or above. */
async function blocksAfter(line: string, file = 'README.md'): Promise<string[]> {
  const text = await readFile(join(__dirname, '..', '..', file), 'utf8');
  const at = text.indexOf(`\n${line}\n`);
  if (at < 0) throw new Error(`${file} has no line ${line}`);
  const level = /^(#+) /.exec(line)?.[1]?.length ?? 7;
  // The section ends at the next heading of its level or above, outside code blocks (where `# ` is a comment).
  let fenced = false;
  const section: string[] = [];
  for (const row of text.slice(at + line.length + 2).split('\n')) {
    if (row.startsWith('```')) fenced = !fenced;
    const heading = !fenced && /^(#+) /.exec(row);
    if (heading && heading[1]!.length <= level) break;
    section.push(row);
  }
  const blocks = [...section.join('\n').matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  if (!blocks.length) throw new Error(`no sh block after ${line} in ${file}`);
  return blocks;
}
const readmeBlock = async (heading: string) => (await blocksAfter(heading))[0]!;

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

async function customerToken(): Promise<string> {
  const res = await app.request('POST', '/api/customer/login', { body: { email: customer.email, password: customer.password } });
  return res.body.access_token as string;
}

describe('the other curl sessions', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'docs-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  test('when the README’s stream commands run, then each stream opens and stays open until stopped', async () => {
    const blocks = await blocksAfter('### Live streams');
    expect(blocks).toHaveLength(2);
    // A stream never ends by itself: each curl is stopped after 3 s, which is its success (28);
    // a refusal answers at once, and ends curl early.
    const stopAfter3s =
      'curl() { local rc=0; command curl --max-time 3 -s "$@" || rc=$?; [ $rc -eq 28 ] || { echo "the stream ended: $rc" >&2; return 1; }; }\n' +
      'set -e\n';
    const env = { API: app.baseUrl, TOKEN: await customerToken(), STAFF_TOKEN: await adminToken(app) };
    const run = await runBash(stopAfter3s + blocks.join('\n'), env, dir);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout.match(/^retry: 2000$/gm)).toHaveLength(4);
    expect(run.stdout).toMatch(/^event: quote$/m);
  });

  test('when the compliance session runs, then the document is uploaded, read back exact, approved, and the level set', async () => {
    const [script] = await blocksAfter('## Walk-through: verification with curl', 'docs/compliance.md');
    const passport = FILES.pdf();
    await writeFile(join(dir, 'passport.pdf'), passport);
    const token = await customerToken();
    const me = await app.request('GET', '/customers/me', { token });
    const env = {
      API: app.baseUrl,
      STAFF_TOKEN: await adminToken(app),
      CUSTOMER_TOKEN: token,
      CUSTOMER_ID: me.body.id as string,
    };
    const run = await runBash(script!, env, dir);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/"type":"identity","status":"pending"/);
    expect(run.stdout).toMatch(/"status":"approved"/);
    expect(run.stdout).toMatch(/"verification_level":1/);
    expect((await readFile(join(dir, 'passport-as-received.pdf'))).equals(passport)).toBe(true);
  });

  test('when the commission walk-through runs, then the group charges 3.50 a lot and EURUSD 1.00', async () => {
    const [script] = await blocksAfter('## Walk-through: charging a commission', 'docs/trading-and-money.md');
    const token = await adminToken(app);
    const groups = await app.request('GET', '/groups?page_size=100', { token });
    const group = (groups.body.items as Array<{ id: string; is_default: boolean }>).find((g) => g.is_default)!;
    const run = await runBash(script!, { API: app.baseUrl, TOKEN: token, GROUP: group.id }, dir);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const after = await app.request('GET', `/groups/${group.id}`, { token });
    expect(after.body).toMatchObject({ commission_type: 'per_lot', commission_value: 3.5 });
    const rows = await app.request('GET', `/groups/${group.id}/instruments?page_size=100`, { token });
    const eurusd = (rows.body.items as Array<{ symbol: string }>).find((r) => r.symbol === 'EURUSD');
    expect(eurusd).toMatchObject({ commission_value: 1 });
  });
});
