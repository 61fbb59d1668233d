import { decodeJwt, decodeProtectedHeader, type JWTPayload } from 'jose';
import { generateSync } from 'otplib';
import type { LoggedIn } from '../../helpers/identity';
import { sql, type TestApp, type TestResponse } from '../../helpers/test-app';

/** Shared by the identity test files (not a test file itself: jest matches *.test.ts only). */

export type Kind = 'user' | 'customer';

export const LOGIN_PATH: Record<Kind, string> = { user: '/api/admin/users/login', customer: '/api/customer/login' };

export { sql };

let addressCounter = 0;
/**
 * A client address of its own (TEST-NET ranges, not private, so express takes it from
 * X-Forwarded-For as the client's). Each test uses its own, so throttle counters never leak
 * between tests of a file.
 */
export function newAddress(): string {
  const n = addressCounter++;
  const nets = ['203.0.113', '198.51.100', '192.0.2'];
  if (n >= nets.length * 254) throw new Error('out of test addresses');
  return `${nets[Math.floor(n / 254)]}.${(n % 254) + 1}`;
}

export function login(
  app: TestApp,
  kind: Kind,
  body: { email: string; password: string; totp_code?: string },
  options: { address?: string; userAgent?: string } = {},
): Promise<TestResponse> {
  const headers: Record<string, string> = {};
  if (options.address) headers['x-forwarded-for'] = options.address;
  if (options.userAgent) headers['user-agent'] = options.userAgent;
  return app.request('POST', LOGIN_PATH[kind], { body, headers });
}

export function claimsOf(token: string): JWTPayload & { type?: string; sid?: string } {
  return decodeJwt(token) as JWTPayload & { type?: string; sid?: string };
}

export function headerOf(token: string) {
  return decodeProtectedHeader(token);
}

/** The session id a token pair belongs to. */
export function sidOf(accessToken: string): string {
  const sid = claimsOf(accessToken).sid;
  if (typeof sid !== 'string') throw new Error('token without sid');
  return sid;
}

export const TOKEN_PAIR_KEYS = ['access_token', 'expires_in', 'refresh_token', 'token_type'];

export function expectTokenPair(res: TestResponse, expiresIn = 900): void {
  if (res.status !== 200) throw new Error(`expected a token pair, got ${res.status} ${res.text}`);
  expect(Object.keys(res.body).sort()).toEqual(TOKEN_PAIR_KEYS);
  expect(typeof res.body.access_token).toBe('string');
  expect(typeof res.body.refresh_token).toBe('string');
  expect(res.body.token_type).toBe('bearer');
  expect(res.body.expires_in).toBe(expiresIn);
  const claims = claimsOf(res.body.access_token);
  expect(claims.exp! - claims.iat!).toBe(expiresIn);
}

export function expectUnauthenticated(res: TestResponse): void {
  if (res.status !== 401) throw new Error(`expected 401, got ${res.status} ${res.text}`);
  expect(res.body.code).toBe('UNAUTHENTICATED');
  expect(typeof res.body.detail).toBe('string');
  expect(res.headers.get('www-authenticate')).toBe('Bearer');
}

/** 200 when the token is usable; every kind of session token may list its sessions. */
export async function probe(app: TestApp, token: string): Promise<number> {
  return (await app.request('GET', '/auth/sessions', { token })).status;
}

// ---- TOTP ----

export const STEP_MS = 30_000;

/** The code of the 30-second step `steps` away from the current one. */
export function codeAt(secret: string, steps = 0): string {
  return generateSync({ secret, epoch: Math.floor((Date.now() + steps * STEP_MS) / 1000) });
}

/**
 * Waits, if needed, until at least `marginMs` remain in the current 30-second step, so a
 * sequence of codes generated now means the same steps to the server as to the test.
 */
export async function awayFromStepEdge(marginMs = 6_000): Promise<void> {
  const left = STEP_MS - (Date.now() % STEP_MS);
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 100));
}

/** A 6-digit code that is not valid for any step within two of now. */
export function wrongCode(secret: string): string {
  const valid = new Set([-2, -1, 0, 1, 2].map((s) => codeAt(secret, s)));
  for (let i = 0; ; i++) {
    const candidate = String((123_456 + i * 7919) % 1_000_000).padStart(6, '0');
    if (!valid.has(candidate)) return candidate;
  }
}

export interface Enrolled {
  secret: string;
  otpauthUrl: string;
  backupCodes: string[];
  enablingCode: string;
}

/**
 * Sets up and enables TOTP for a logged-in principal. The enabling code is the previous
 * step's, so codes of the current and the next step are still fresh for the test.
 */
export async function enrolTotp(app: TestApp, who: Pick<LoggedIn, 'token'>): Promise<Enrolled> {
  const setup = await app.request('POST', '/auth/totp/setup', { token: who.token });
  if (setup.status !== 200) throw new Error(`totp setup: ${setup.status} ${setup.text}`);
  await awayFromStepEdge();
  const enablingCode = codeAt(setup.body.secret, -1);
  const enable = await app.request('POST', '/auth/totp/enable', { token: who.token, body: { code: enablingCode } });
  if (enable.status !== 200) throw new Error(`totp enable: ${enable.status} ${enable.text}`);
  return { secret: setup.body.secret, otpauthUrl: setup.body.otpauth_url, backupCodes: enable.body.backup_codes, enablingCode };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
