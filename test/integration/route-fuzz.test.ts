import http from 'node:http';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { SignJWT } from 'jose';
import { z } from 'zod';
import type { RouteSpec } from '../../src/api/http/route';
import { ROUTES } from '../../src/api/routes';
import { ADMIN, adminToken, createCustomer, type LoggedIn } from '../helpers/identity';
import { startTestApp, type TestApp } from '../helpers/test-app';
import { fundedAccount, openOrder, setQuote, setUpMarket } from '../helpers/trading';

/**
 * Property-based fuzz of the whole route table. For every route of ROUTES it derives the
 * field names and shapes of its path, query and body from the route's own zod schemas
 * (so a new route is covered without touching this file), then sends a mix of values that
 * pass validation (to reach the handlers) and hostile ones (NUL, lone surrogates, huge and
 * empty strings, numbers at and past every bound, wrong types, deep nesting, prototype
 * keys, badly encoded path segments and query strings), and asserts that nothing answers
 * 5xx and that every 4xx is in the service's one error format.
 */

/** FUZZ_SEED and FUZZ_RUNS explore further by hand (`FUZZ_RUNS=500 npx jest route-fuzz`); CI runs the fixed seed. */
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const RUNS = Number(process.env.FUZZ_RUNS ?? 35);
/** Routes whose handler waits (bulk close waits on its jobs): fewer runs. */
const RUNS_BY_ROUTE: Record<string, number> = { 'POST /orders/bulk-close': Math.min(RUNS, 6) };
/** A route that takes no input at all is only called a few times, with stray query parameters. */
const RUNS_WITHOUT_INPUT = 4;

type JsonSchema = {
  type?: string;
  format?: string;
  pattern?: string;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
};

function inputSchema(schema: z.ZodType | undefined): JsonSchema | undefined {
  return schema ? (z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema) : undefined;
}

// ---------------------------------------------------------------------------------------
// Encoding: JSON text with raw numbers, percent-encoding that can carry lone surrogates.

/** JSON text sent as is: numbers JSON.stringify cannot write (-0, 1e400, 30 digits). */
class RawJson {
  constructor(readonly text: string) {}
}

/** JSON text of a value; own keys named __proto__ or constructor are written like any other. */
function toJson(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .map((k) => `${JSON.stringify(k)}:${toJson(record[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** An object with an own enumerable key, even `__proto__`. */
function withKey(target: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  return target;
}

const hex = (b: number) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`;

/**
 * Percent-encodes text as UTF-8 for a path segment or query value. A lone surrogate has no
 * UTF-8 form: it is written as the three bytes its code unit would take (ED A0 80 for
 * U+D800), which is invalid UTF-8, as a careless client would send it.
 */
function pct(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(text.slice(i, i + 2));
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      out += hex(0xe0 | (unit >> 12)) + hex(0x80 | ((unit >> 6) & 0x3f)) + hex(0x80 | (unit & 0x3f));
    } else {
      out += encodeURIComponent(text[i]!);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Values.

/** Real rows of the fixture, so valid-shaped ids and logins sometimes hit them. */
interface Known {
  uuids: string[];
  integers: number[];
  strings: string[];
  /** Real values by field name (login, group_id, symbol, ...): a field of that name takes them most often. */
  byName: Record<string, Array<string | number>>;
}
const known: Known = { uuids: [], integers: [], strings: [], byName: {} };

/** The real values of a field named `name` that its schema takes, as the schema's type. */
function knownFor(name: string | undefined, s: JsonSchema): unknown[] {
  const values = name ? (known.byName[name] ?? []) : [];
  const branches = s.anyOf ?? [s];
  return values.flatMap((v): unknown[] => {
    for (const b of branches) {
      if (b.type === 'string') {
        const text = String(v);
        if (b.pattern && !new RegExp(b.pattern).test(text)) continue;
        if (b.maxLength !== undefined && text.length > b.maxLength) continue;
        return [text];
      }
      if ((b.type === 'integer' || b.type === 'number') && typeof v === 'number') {
        if ((b.minimum !== undefined && v < b.minimum) || (b.maximum !== undefined && v > b.maximum)) continue;
        return [v];
      }
    }
    return [];
  });
}

const nested = (depth: number, open: string, leaf: string, close: string) =>
  new RawJson(open.repeat(depth) + leaf + close.repeat(depth));

const LONG = 'x'.repeat(10_000);

/** Hostile values for any field: each is something a careless or malicious client sends. */
const HOSTILE_VALUES: unknown[] = [
  // Text the database or the runtime cannot hold or should not see.
  '\u0000',
  'a\u0000b',
  '\ud800',
  'a\udc00b',
  '\udfff\ud800',
  LONG,
  '',
  ' ',
  '\u202e\ufeff',
  'e\u0301\u{1f44d}\u{1f3fd}',
  "' OR 1=1 --",
  '../../etc/passwd',
  '%00',
  'NaN',
  'Infinity',
  '-1',
  '1e308',
  '9007199254740993',
  // Numbers at and past every bound.
  1e308,
  -1e308,
  1e21,
  -1e21,
  Number.MAX_SAFE_INTEGER + 2,
  -(Number.MAX_SAFE_INTEGER + 2),
  Number.MAX_SAFE_INTEGER,
  2 ** 31,
  -(2 ** 31) - 1,
  Number.MIN_VALUE,
  0.1 + 0.2,
  1.0000000000000002,
  0.123456789012345,
  -1,
  0,
  new RawJson('-0'),
  new RawJson('1e400'),
  new RawJson('-1e400'),
  new RawJson('1e-400'),
  new RawJson('123456789012345678901234567890'),
  new RawJson('0.1234567890123456789012345678'),
  // Wrong types.
  null,
  true,
  false,
  {},
  [],
  [null],
  { a: 1 },
  [[[]]],
  // Keys that are special to JavaScript objects.
  withKey({}, '__proto__', { is_admin: true }),
  withKey({}, 'constructor', { prototype: { polluted: true } }),
  { toString: 'x', valueOf: 1, hasOwnProperty: 'x' },
  // Deep nesting.
  nested(100, '[', '1', ']'),
  nested(100, '{"a":', '1', '}'),
];

const hostile = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_VALUES) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);

/** Numbers of valid range with many decimals, or the bounds themselves, or round market values. */
function numberArb(s: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const lowExcluded = s.exclusiveMinimum !== undefined;
  const highExcluded = s.exclusiveMaximum !== undefined;
  const min = s.minimum ?? s.exclusiveMinimum ?? -1e9;
  const max = s.maximum ?? s.exclusiveMaximum ?? 1e9;
  const inRange = (v: number) => (lowExcluded ? v > min : v >= min) && (highExcluded ? v < max : v <= max);
  const bounds = [min, max].filter(inRange);
  const market = [0.01, 0.1, 1, 1.1, 1.1001, 1.0995, 1.2, 100, 150.01, 1000, ...known.integers].filter(inRange);
  if (integer) {
    const lo = Math.ceil(lowExcluded ? min + 1 : min);
    const hi = Math.floor(highExcluded ? max - 1 : max);
    const small = fc.integer({ min: Math.max(lo, -(2 ** 31)), max: Math.min(hi, 2 ** 31 - 1) });
    const wide = fc.maxSafeNat().map((v) => lo + (v % (hi - lo + 1)));
    const ids = known.integers.filter(inRange);
    return fc.oneof(
      // Real logins, tickets and order ids, most often: past validation, into the handler.
      ...(ids.length ? [{ weight: 8, arbitrary: fc.constantFrom(...ids) }] : []),
      ...(bounds.length ? [fc.constantFrom(...bounds.map(Math.round))] : []),
      ...(market.filter(Number.isInteger).length ? [fc.constantFrom(...market.filter(Number.isInteger))] : []),
      small,
      wide,
    );
  }
  const double = fc.double({ min, max, minExcluded: lowExcluded, maxExcluded: highExcluded, noNaN: true });
  return fc.oneof(
    ...(bounds.length ? [fc.constantFrom(...bounds)] : []),
    ...(market.length ? [{ weight: 3, arbitrary: fc.constantFrom(...market) }] : []),
    double,
    { weight: 3, arbitrary: double.map((v) => Math.round(v * 100) / 100).filter(inRange) },
    double.map((v) => Math.round(v * 1e5) / 1e5).filter(inRange),
  );
}

function stringArb(s: JsonSchema): fc.Arbitrary<string> {
  const minLength = s.minLength ?? 0;
  const maxLength = s.maxLength ?? 64;
  const pattern = s.pattern ? new RegExp(s.pattern) : undefined;
  if (s.format === 'uuid') return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...known.uuids) }, fc.uuid());
  if (s.format === 'date-time') {
    const date = fc.date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true });
    return fc.oneof(
      // The ends of what the format takes, where an offset moves the instant past year 1 or 9999.
      fc.constantFrom('0001-01-01T00:00:00+05:30', '9999-12-31T23:59:59.999-05:00', '0000-01-01T00:00:00Z'),
      date.map((d) => d.toISOString()),
      date.map((d) => d.toISOString().replace('Z', '+05:30')),
      date.map((d) => d.toISOString().replace('Z', '-05:00')),
      fc.integer({ min: -3600, max: 30 * 86400 }).map((sec) => new Date(Date.now() + sec * 1000).toISOString()),
    );
  }
  // Real emails, logins, symbols and passwords where the schema allows them.
  const pool = [...known.strings, ...(pattern ? known.integers.map(String) : [])].filter(
    (v) =>
      v.length >= minLength &&
      v.length <= maxLength &&
      (!pattern || pattern.test(v)) &&
      (s.format !== 'email' || v.includes('@')),
  );
  const fromPool = pool.length ? [{ weight: 4, arbitrary: fc.constantFrom(...pool) }] : [];
  if (s.format === 'email' && pattern)
    return fc.oneof(
      ...fromPool,
      fc.emailAddress().filter((v) => pattern.test(v)),
    );
  if (pattern) {
    try {
      return fc.oneof(...fromPool, fc.stringMatching(pattern, { maxLength }));
    } catch {
      // A pattern fast-check cannot generate from: plain strings, most of which fail it.
    }
  }
  return fc.oneof(
    ...fromPool,
    fc.string({ minLength, maxLength: Math.min(maxLength, 40) }),
    fc.string({ minLength, maxLength: Math.min(maxLength, 40), unit: 'binary' }),
  );
}

/** Values the schema accepts (mostly: a refinement or a business rule may still refuse them). */
function validArb(s: JsonSchema, name?: string): fc.Arbitrary<unknown> {
  const real = knownFor(name, s);
  if (real.length) return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...real) }, shapedArb(s, name));
  return shapedArb(s, name);
}

function shapedArb(s: JsonSchema, name?: string): fc.Arbitrary<unknown> {
  if (s.anyOf) return fc.oneof(...s.anyOf.map((b) => validArb(b, name)));
  if (s.enum) return fc.constantFrom(...s.enum);
  switch (s.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return numberArb(s, true);
    case 'number':
      return numberArb(s, false);
    case 'string':
      return stringArb(s);
    case 'array':
      return fc.array(s.items ? validArb(s.items, name) : fc.jsonValue({ maxDepth: 1 }), {
        minLength: s.minItems ?? 0,
        maxLength: Math.min(s.maxItems ?? 5, 5),
      });
    case 'object':
      return objectArb(s, false);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/**
 * Each request is built in one of two modes: `valid` (every field schema-shaped, so it gets
 * past validation into the handler) or `hostile` (each field valid three times in four and
 * hostile otherwise, plus stray keys, repeated query parameters and raw path segments).
 */
type Mode = 'valid' | 'hostile';

/** `arb` one time in five, null otherwise (fc.option's freq cannot make null the likelier one). */
const rarely = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> =>
  fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });

const fieldArb = (s: JsonSchema, mode: Mode, name: string) =>
  mode === 'valid' ? validArb(s, name) : fc.oneof({ weight: 3, arbitrary: validArb(s, name) }, { weight: 1, arbitrary: hostile });

/** An object of the schema's fields, each present or absent (or hostile), plus sometimes a stray special key. */
function objectArb(s: JsonSchema, hostileMode: boolean): fc.Arbitrary<Record<string, unknown>> {
  const mode: Mode = hostileMode ? 'hostile' : 'valid';
  const required = new Set(s.required ?? []);
  const fields = Object.entries(s.properties ?? {}).map(([name, schema]) => {
    const present = fieldArb(schema, mode, name).map((v) => ({ present: true, v }));
    const absent = fc.constant({ present: false, v: undefined as unknown });
    if (required.has(name) && !hostileMode) return present.map((f) => [name, f] as const);
    return fc
      .oneof({ weight: required.has(name) ? 12 : 1, arbitrary: present }, { weight: 1, arbitrary: absent })
      .map((f) => [name, f] as const);
  });
  const stray = hostileMode
    ? rarely(fc.tuple(fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', '', '\u0000', 'is_default'), hostile))
    : fc.constant(null);
  return fc.tuple(fc.tuple(...fields), stray).map(([entries, extra]) => {
    const out: Record<string, unknown> = {};
    for (const [name, f] of entries) if (f.present) withKey(out, name, f.v);
    if (extra) withKey(out, extra[0], extra[1]);
    return out;
  });
}

/** A body: an object of the schema; in hostile mode sometimes not an object, or not JSON at all. */
function bodyArb(s: JsonSchema, mode: Mode): fc.Arbitrary<string | undefined> {
  if (mode === 'valid') return objectArb(s, false).map(toJson);
  return fc.oneof(
    { weight: 12, arbitrary: objectArb(s, true).map(toJson) },
    { weight: 1, arbitrary: hostile.map(toJson) },
    { weight: 1, arbitrary: fc.constantFrom(undefined, '', '{', '{"a":1,}', '\u0000', nested(10_000, '[', '', ']').text) },
  );
}

const asText = (v: unknown) => (typeof v === 'string' ? v : v instanceof RawJson ? v.text : toJson(v));

/** A query value, already percent-encoded: valid text, hostile text, or raw bad escapes. */
function queryValueArb(s: JsonSchema, mode: Mode, name?: string): fc.Arbitrary<string> {
  const valid = validArb(s, name).map((v) => pct(asText(v)));
  if (mode === 'valid') return valid;
  return fc.oneof(
    { weight: 6, arbitrary: valid },
    { weight: 1, arbitrary: fc.constantFrom('true', 'false', '1', '0', 'yes') },
    { weight: 3, arbitrary: hostile.map((v) => pct(asText(v))) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '%00',
        'a%00b',
        '%ED%A0%80',
        'a%ED%B0%80b',
        '%FF',
        '%C0%AF',
        '%',
        '%ZZ',
        '%2',
        '+',
        '0x10',
        '1%2C2',
      ),
    },
  );
}

/** Query pairs (already encoded): each field maybe; in hostile mode sometimes repeated, sometimes a stray key. */
function queryArb(s: JsonSchema | undefined, mode: Mode): fc.Arbitrary<Array<[string, string]>> {
  const required = new Set(s?.required ?? []);
  const fields = Object.entries(s?.properties ?? {}).map(([name, schema]) =>
    fc.tuple(
      fc.constant(name),
      mode === 'valid' && required.has(name)
        ? queryValueArb(schema, mode, name)
        : fc.option(queryValueArb(schema, mode, name), { freq: required.has(name) ? 12 : 2 }),
      mode === 'valid' ? fc.constant(null) : rarely(queryValueArb(schema, mode, name)),
    ),
  );
  const stray =
    mode === 'valid'
      ? fc.constant(null)
      : rarely(fc.tuple(fc.constantFrom('__proto__', 'constructor', '%00', '%ED%A0%80', 'a[b]', ''), queryValueArb({}, mode)));
  return fc.tuple(fc.tuple(...fields), stray).map(([entries, extra]) => {
    const pairs: Array<[string, string]> = [];
    for (const [name, value, repeat] of entries) {
      if (value === null) continue;
      pairs.push([name, value]);
      // ?login=1&login=2: a list where one value is expected.
      if (repeat !== null) pairs.push([name, repeat]);
    }
    if (extra) pairs.push(extra);
    return pairs;
  });
}

/** Raw path segments, sent exactly as written (the client does not normalise them). */
const RAW_SEGMENTS = [
  '%ZZ',
  '%',
  '%00',
  '%ED%A0%80',
  '..',
  '.',
  '%2e%2e',
  '%2F',
  'a%2Fb',
  '%C0%AE',
  '%25',
  'caf\u00e9',
  'x'.repeat(5000),
];

function pathValueArb(s: JsonSchema, mode: Mode, name: string): fc.Arbitrary<string> {
  const valid = validArb(s, name).map((v) => pct(asText(v)));
  if (mode === 'valid') return valid;
  return fc.oneof(
    { weight: 3, arbitrary: valid },
    { weight: 3, arbitrary: fc.constantFrom(...RAW_SEGMENTS) },
    { weight: 2, arbitrary: hostile.map((v) => pct(asText(v))) },
    { weight: 1, arbitrary: fc.constantFrom(...known.integers.map(String), ...known.uuids) },
  );
}

function pathArb(route: RouteSpec, s: JsonSchema | undefined, mode: Mode): fc.Arbitrary<string> {
  const names = [...route.path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]!);
  const values = names.map((name) => pathValueArb(s?.properties?.[name] ?? { type: 'string' }, mode, name));
  return fc.tuple(...values).map((segments) => {
    let i = 0;
    return route.path.replace(/\{[A-Za-z0-9_]+\}/g, () => segments[i++]!);
  });
}

// ---------------------------------------------------------------------------------------
// Sending and checking.

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: unknown;
}

let app: TestApp;
let agent: http.Agent;

/** One request over node:http, whose path is sent byte for byte (fetch would normalise `..`). */
function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const { hostname, port } = new URL(app.baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: hostname,
        port,
        method: method.toUpperCase(),
        path,
        agent,
        headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        // An event stream never ends on its own: its status and headers are the answer.
        if ((res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
          res.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '', body: '' });
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          if ((res.headers['content-type'] ?? '').includes('json') && text) {
            try {
              parsed = JSON.parse(text);
            } catch {
              parsed = text;
            }
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed });
        });
      },
    );
    req.setTimeout(40_000, () => req.destroy(new Error(`no answer in 40 s to ${method.toUpperCase()} ${path}`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Long runs of one character shortened, so a failing request prints readably. */
function preview(text: string, limit = 1500): string {
  const short = text.replace(/(.)\1{30,}/gs, (run, ch: string) => `${ch}…(×${run.length})`);
  return short.length > limit ? `${short.slice(0, limit)}…(${short.length} chars)` : short;
}

/** Non-ASCII and control characters escaped, so NUL and lone surrogates are visible. */
function visible(text: string): string {
  return JSON.stringify(text).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const ERROR_CODE = /^[A-Z][A-Z0-9_]*$/;
const LOCATIONS = new Set(['body', 'query', 'path', 'header']);

/** What is wrong with an error answer's format, or undefined. */
function formatProblem(answer: Answer): string | undefined {
  const body = answer.body as Record<string, unknown> | string;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'the body is not a JSON object';
  if (answer.status === 422) {
    if (Object.keys(body).join() !== 'detail') return 'a 422 body has exactly one key, detail';
    if (!Array.isArray(body.detail) || body.detail.length === 0) return 'a 422 detail is a non-empty list';
    for (const item of body.detail as Array<Record<string, unknown>>) {
      if (typeof item !== 'object' || item === null) return 'a 422 detail item is an object';
      if (Object.keys(item).sort().join() !== 'loc,msg,type') return 'a 422 item has exactly loc, msg and type';
      const loc = item.loc;
      if (!Array.isArray(loc) || loc.length === 0 || !LOCATIONS.has(loc[0] as string))
        return 'a 422 loc starts with body, query, path or header';
      if (!loc.every((p) => typeof p === 'string' || Number.isInteger(p))) return 'a 422 loc holds strings and integers only';
      if (typeof item.msg !== 'string' || item.msg === '') return 'a 422 msg is a non-empty string';
      if (typeof item.type !== 'string' || item.type === '') return 'a 422 type is a non-empty string';
    }
    return undefined;
  }
  if (Object.keys(body).sort().join() !== 'code,detail') return 'an error body has exactly detail and code';
  if (typeof body.detail !== 'string' || body.detail === '') return 'detail is a non-empty string';
  if (typeof body.code !== 'string' || !ERROR_CODE.test(body.code)) return 'code is UPPER_SNAKE_CASE';
  return undefined;
}

/**
 * FUZZ_STATS=1 prints how each route answered (status, code or first 422 loc), to see how
 * many requests got past validation into the handlers when tuning the generators.
 */
const stats = new Map<string, number>();
afterAll(() => {
  if (!process.env.FUZZ_STATS) return;
  const lines = [...stats.entries()].sort().map(([outcome, n]) => `${n}\t${outcome}`);
  console.log(lines.join('\n'));
});

function countOutcome(sent: Sent, answer: Answer): void {
  const body = answer.body as { code?: string; detail?: unknown };
  const first = Array.isArray(body?.detail) ? (body.detail[0] as { loc: unknown[]; type: string }) : undefined;
  const what = first ? `${first.loc.slice(0, 2).join('.')} ${first.type}` : (body?.code ?? '');
  const outcome = `${sent.method.toUpperCase()} ${sent.routePath ?? sent.path} ${answer.status} ${visible(what)}`;
  stats.set(outcome, (stats.get(outcome) ?? 0) + 1);
}

interface Sent {
  /** The route's template, for FUZZ_STATS. */
  routePath?: string;
  method: string;
  path: string;
  query: Array<[string, string]>;
  body?: string;
  token: string;
  headers?: Record<string, string>;
}

/** The request, the answer and the server's log line for it, for an assertion message. */
function describeFailure(why: string, sent: Sent, answer: Answer): string {
  const id = answer.headers['x-request-id'];
  const logged = app.logs.find((l) => l.request_id === id && l.msg === 'unhandled error') as
    { err?: { message?: string; stack?: string } } | undefined;
  const queryText = sent.query.map(([k, v]) => `${k}=${v}`).join('&');
  return [
    `${why}: ${sent.method.toUpperCase()} ${preview(sent.path, 300)}${queryText ? `?${preview(queryText, 300)}` : ''}`,
    `  method: ${sent.method.toUpperCase()}`,
    `  path:   ${preview(sent.path)}`,
    `  query:  ${preview(queryText) || '(none)'}`,
    `  body:   ${sent.body === undefined ? '(none)' : preview(visible(sent.body))}`,
    `  token:  ${sent.token}${sent.headers ? `, headers ${JSON.stringify(sent.headers)}` : ''}`,
    `  answer: ${answer.status} ${preview(answer.text, 500)}`,
    ...(logged ? [`  server: ${logged.err?.message ?? ''}`, preview(logged.err?.stack ?? '', 1500)] : []),
  ].join('\n');
}

/** Orders and withdrawals the fuzz itself made become real ids for the routes that come after. */
function harvest(body: unknown): void {
  const withdrawal = (body as { transaction_id?: unknown } | null)?.transaction_id;
  if (typeof withdrawal === 'string') {
    const list = (known.byName.transaction_id ??= []);
    if (!list.includes(withdrawal)) list.push(withdrawal);
  }
  const order = (body as { order?: unknown } | null)?.order;
  if (typeof order !== 'number') return;
  for (const name of ['ticket', 'order_id']) {
    const list = (known.byName[name] ??= []);
    if (!list.includes(order)) list.push(order);
  }
}

async function endMaintenance(): Promise<void> {
  const off = await send(
    'PATCH',
    '/api/admin/settings',
    { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    JSON.stringify({ maintenance: { enabled: false } }),
  );
  if (off.status !== 200) throw new Error(`maintenance could not be ended: ${off.status}`);
}

async function sendAndCheck(sent: Sent, tokens: Record<string, string | undefined>): Promise<Answer> {
  const headers: Record<string, string> = { ...sent.headers };
  const token = tokens[sent.token];
  if (token) headers.authorization = `Bearer ${token}`;
  if (sent.body !== undefined) headers['content-type'] = 'application/json';
  const queryText = sent.query.map(([k, v]) => `${k}=${v}`).join('&');
  const answer = await send(sent.method, sent.path + (queryText ? `?${queryText}` : ''), headers, sent.body);
  if (process.env.FUZZ_STATS) countOutcome(sent, answer);
  if (answer.status >= 200 && answer.status < 300) harvest(answer.body);
  // A settings change may switch maintenance mode on: every later customer write would answer
  // 503 MAINTENANCE (as documented) and the fuzz would reach none of their handlers. So it goes
  // off again at once; a 503 MAINTENANCE is a documented answer, never a fault.
  if (sent.method === 'PATCH' && sent.path === '/api/admin/settings' && answer.status === 200) await endMaintenance();
  const maintenance = answer.status === 503 && (answer.body as { code?: string } | null)?.code === 'MAINTENANCE';
  if (answer.status >= 500 && !maintenance) throw new Error(describeFailure(`answered ${answer.status}`, sent, answer));
  if (answer.status >= 400) {
    const problem = formatProblem(answer);
    if (problem) throw new Error(describeFailure(`error format broken (${problem})`, sent, answer));
  }
  return answer;
}

// ---------------------------------------------------------------------------------------
// The fixture: a group, EURUSD, USDJPY and an instrument at every bound (XTREME) with quotes,
// a customer with a funded USD account and a JPY account, open orders and a pending order,
// so valid-shaped ids, logins and tickets often hit real rows.

let admin: string;
let customer: LoggedIn;
let tokens: Record<string, string | undefined>;
let login: number;

function subjectOf(token: string): string {
  return (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { sub: string }).sub;
}

/** An instrument at every bound at once: the largest contract, prices and spread, quoted in JPY. */
const EXTREME = { symbol: 'XTREME', bid: 9_999_000, ask: 10_000_000 };

/** Quotes back where the fixture set them (a route may have moved or deleted them), random walk off. */
async function restoreMarket(): Promise<void> {
  await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
  await setQuote(app, admin, 'USDJPY', 150, 150.02);
  await setQuote(app, admin, EXTREME.symbol, EXTREME.bid, EXTREME.ask);
  await app.request('PUT', '/simulator/random-walk', { token: admin, body: { enabled: false } });
}

beforeAll(async () => {
  app = await startTestApp({ label: 'route-fuzz', env: { BULK_CLOSE_WAIT_MS: '5000' } });
  agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  admin = await adminToken(app);
  const market = await setUpMarket(app, admin);
  const extreme = await app.request('POST', '/api/platform/instruments', {
    token: admin,
    body: { symbol: EXTREME.symbol, digits: 0, contract_size: 1_000_000, base_currency: 'XAU', quote_currency: 'JPY' },
  });
  if (extreme.status !== 201) throw new Error(`instrument: ${extreme.status} ${extreme.text}`);
  const row = await app.request('PUT', `/groups/${market.groupId}/instruments/${EXTREME.symbol}`, {
    token: admin,
    body: { enabled: true, spread: 100_000, swap_long: 0, swap_short: 0 },
  });
  if (row.status !== 201) throw new Error(`group row: ${row.status} ${row.text}`);
  customer = await createCustomer(app, admin);
  login = await fundedAccount(app, admin, customer.id, market.groupId, 10_000);
  // Deposits up to the largest amount, so orders at the bounds have the margin to open.
  for (let i = 0; i < 3; i++)
    await app.request('POST', `/api/backoffice/accounts/${login}/deposits`, { token: admin, body: { amount: 1e12 } });
  await setQuote(app, admin, EXTREME.symbol, EXTREME.bid, EXTREME.ask);
  const ticket = await openOrder(app, admin, login);
  const extremeTicket = await openOrder(app, admin, login, 0, 1000, EXTREME.symbol);
  const pending = await app.request('POST', '/orders/pending', {
    token: admin,
    body: { login, symbol: 'EURUSD', cmd: 2, volume: 0.01, trigger_price: 1.05 },
  });
  if (pending.status !== 201) throw new Error(`pending order: ${pending.status} ${pending.text}`);
  // A second account in another currency, so profits convert through a quote.
  const jpy = await app.request('POST', `/api/crm/customers/${customer.id}/accounts`, {
    token: admin,
    body: { kind: 'live', group_id: market.groupId, currency: 'JPY' },
  });
  if (jpy.status !== 201) throw new Error(`JPY account: ${jpy.status} ${jpy.text}`);
  const jpyLogin = jpy.body.login as number;
  await app.request('POST', `/api/backoffice/accounts/${jpyLogin}/deposits`, { token: admin, body: { amount: 1_000_000 } });
  const jpyTicket = await openOrder(app, admin, jpyLogin, 1, 0.01, 'EURUSD');
  // The customer's wallet, funded, and a pending withdrawal: transfers and withdrawal decisions reach their handlers.
  const mine = await app.request('GET', '/customers/me/accounts', { token: customer.token });
  const walletLogin = (mine.body.items as Array<{ login: number; kind: string }>).find((a) => a.kind === 'wallet')!.login;
  await app.request('POST', `/api/backoffice/accounts/${walletLogin}/deposits`, { token: admin, body: { amount: 1e12 } });
  const withdrawal = await app.request('POST', '/customers/me/withdraw', {
    token: customer.token,
    body: { amount: 10, payment_data: { iban: 'DE02120300000000202051' } },
  });
  if (withdrawal.status !== 202) throw new Error(`withdrawal: ${withdrawal.status} ${withdrawal.text}`);
  known.uuids.push(market.groupId, customer.id, subjectOf(admin), withdrawal.body.transaction_id as string);
  known.integers.push(login, jpyLogin, walletLogin, ticket, jpyTicket, extremeTicket, pending.body.order as number);
  known.byName = {
    login: [login, jpyLogin, walletLogin],
    from_login: [walletLogin, login, jpyLogin],
    to_login: [login, walletLogin, jpyLogin],
    transaction_id: [withdrawal.body.transaction_id as string],
    ticket: [ticket, jpyTicket, extremeTicket],
    order_id: [pending.body.order as number],
    group_id: [market.groupId],
    customer_id: [customer.id],
    actor_id: [subjectOf(admin)],
    symbol: ['EURUSD', 'USDJPY', EXTREME.symbol],
    symbols: ['EURUSD'],
    email: [ADMIN.email, customer.email, customer.email.toUpperCase()],
    password: [ADMIN.password, customer.password],
  };
  known.strings.push('EURUSD', 'USDJPY', EXTREME.symbol, ADMIN.email, ADMIN.password, customer.email, customer.password);
  tokens = { admin, customer: customer.token, none: undefined };
}, 60_000);

afterAll(async () => {
  agent?.destroy();
  await app?.stop();
});

// ---------------------------------------------------------------------------------------
// Focused examples, one per class of 500 the black-box fuzz found.

async function rawExchange(payload: string | Buffer): Promise<string> {
  const { port } = new URL(app.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', (err: NodeJS.ErrnoException) =>
      err.code === 'ECONNRESET' || err.code === 'EPIPE' ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(err),
    );
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer on the raw socket')));
    socket.write(payload);
  });
}

function parseRawAnswer(raw: string): { status: number; headers: string; body: unknown } {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  return { status, headers: head, body: body ? JSON.parse(body) : undefined };
}

const tokenFor = (route: RouteSpec): string =>
  route.access.kind === 'public' ? 'none' : route.access.kind === 'customer' ? 'customer' : 'admin';

describe('examples of the classes the black-box fuzz found', () => {
  const withParams = ROUTES.filter((r) => r.params);

  test.each(withParams.map((r) => [r.method.toUpperCase(), r.path, r] as const))(
    'when every path parameter of %s %s is %%ZZ, then 400 or 422 in the error format',
    async (_method, _path, route) => {
      for (const segment of ['%ZZ', '%ED%A0%80', '%00']) {
        const path = route.path.replace(/\{[A-Za-z0-9_]+\}/g, segment);
        const sent: Sent = { method: route.method, path, query: [], token: tokenFor(route) };
        const answer = await sendAndCheck(sent, tokens);
        expect([400, 422]).toContain(answer.status);
      }
    },
  );

  test.each(['gzip', 'deflate', 'br'])(
    'when a JSON body comes with Content-Encoding %s, then 415 UNSUPPORTED_MEDIA_TYPE on any path',
    async (encoding) => {
      const garbage = '\u001f\u008b\u0008garbage-not-compressed';
      const paths = [
        ...ROUTES.filter((r) => r.body).map((r) => [r.method, r.path.replace(/\{[A-Za-z0-9_]+\}/g, '1')] as const),
        ['post', '/no/such/route'] as const,
      ];
      for (const [method, path] of paths) {
        const answer = await send(
          method,
          path,
          { 'content-type': 'application/json', 'content-encoding': encoding, authorization: `Bearer ${admin}` },
          garbage,
        );
        expect({ method, path, status: answer.status, body: answer.body }).toEqual({
          method,
          path,
          status: 415,
          body: { detail: expect.any(String), code: 'UNSUPPORTED_MEDIA_TYPE' },
        });
      }
    },
  );

  const unsafeText = [
    ['NUL', 'a\u0000b'],
    ['a lone surrogate', 'a\ud800b'],
  ];

  test.each(unsafeText)('when a login email holds %s, then 422 at body.email', async (_what, text) => {
    const res = await app.request('POST', '/api/admin/users/login', { body: { email: `x${text}@broker.test`, password: 'p' } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([{ loc: ['body', 'email'], msg: expect.any(String), type: 'string_unicode' }]);
  });

  test.each(unsafeText)('when an order comment and symbol hold %s, then 422 at each field', async (_what, text) => {
    const res = await app.request('POST', '/orders', {
      token: admin,
      body: { login, symbol: `EUR${text}USD`, cmd: 0, volume: 0.01, comment: `note ${text}` },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: { loc: unknown[]; type: string }) => [d.loc, d.type])).toEqual([
      [['body', 'symbol'], 'string_unicode'],
      [['body', 'comment'], 'string_unicode'],
    ]);
  });

  test.each([
    ['NUL', '%00'],
    ['NUL inside text', 'quote%00.set'],
    ['a lone surrogate (its invalid UTF-8 bytes)', '%ED%A0%80'],
    ['bytes that are not UTF-8', 'a%FFb'],
  ])('when an audit filter action holds %s, then 422 at query.action', async (_what, encoded) => {
    const res = await app.request('GET', `/api/admin/audit?action=${encoded}`, { token: admin });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([{ loc: ['query', 'action'], msg: expect.any(String), type: 'string_unicode' }]);
  });

  test.each([
    ['year 0 by its offset', '0001-01-01T00:00:00+05:30'],
    ['year 0', '0000-06-01T00:00:00Z'],
    ['year 10000 by its offset', '9999-12-31T23:59:59-05:00'],
  ])('when an audit filter since or until is in %s, then 422 datetime_parsing at that parameter', async (_what, value) => {
    for (const name of ['since', 'until']) {
      const res = await app.request('GET', `/api/admin/audit?${name}=${encodeURIComponent(value)}`, { token: admin });
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual([{ loc: ['query', name], msg: expect.any(String), type: 'datetime_parsing' }]);
    }
  });

  test('when a pending order expires in year 10000 once its offset applies, then 422 datetime_parsing at expiry_at', async () => {
    const res = await app.request('POST', '/orders/pending', {
      token: admin,
      body: { login, symbol: 'EURUSD', cmd: 2, volume: 0.01, trigger_price: 1.05, expiry_at: '9999-12-31T23:59:59-05:00' },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([{ loc: ['body', 'expiry_at'], msg: expect.any(String), type: 'datetime_parsing' }]);
  });

  test('when a validly signed access token carries a sid that is not a UUID, then 401', async () => {
    const key = new TextEncoder().encode(app.config.jwt.secret);
    const token = await new SignJWT({ type: 'user', sid: 'not-a-uuid' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(subjectOf(admin))
      .setIssuer(app.config.jwt.issuer)
      .setAudience(app.config.jwt.audience)
      .setIssuedAt()
      .setExpirationTime('5m')
      .setJti(randomUUID())
      .sign(key);
    const res = await app.request('GET', '/api/admin/settings', { token });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ detail: expect.any(String), code: 'UNAUTHENTICATED' });
  });

  test("when the request line is malformed, then Node's own 400 carries a JSON error body", async () => {
    const answer = parseRawAnswer(await rawExchange('GET /health HTTP/1.1 junk\r\nHost: x\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(answer.headers).toMatch(/content-type: application\/json/i);
    expect(answer.body).toEqual({ detail: expect.any(String), code: 'BAD_REQUEST' });
  });

  test("when the header block is too large, then Node's own 431 carries a JSON error body", async () => {
    const answer = parseRawAnswer(
      await rawExchange(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\nX-End: 1\r\n\r\n`),
    );
    expect(answer.status).toBe(431);
    expect(answer.headers).toMatch(/content-type: application\/json/i);
    expect(answer.body).toEqual({ detail: expect.any(String), code: 'HEADERS_TOO_LARGE' });
  });
});

// ---------------------------------------------------------------------------------------
// The fuzz: every route of the table.

/** Who calls: a staff route the admin, a customer route the customer, the others either. */
function tokenArb(route: RouteSpec): fc.Arbitrary<string> {
  switch (route.access.kind) {
    case 'public':
      return fc.constant('none');
    case 'customer':
      return fc.constant('customer');
    case 'staff':
      return fc.constant('admin');
    case 'session':
    case 'staff_or_customer':
    case 'authenticated':
      return fc.constantFrom('admin', 'customer');
  }
}

/** An Idempotency-Key on the routes that take one: fresh, reused, or malformed. */
const idempotencyArb = fc.option(
  fc.oneof(fc.uuid(), fc.constantFrom('fixed-key-1', '', ' ', 'k'.repeat(300), 'caf\u00e9', 'a b')),
  { freq: 2 },
);

const fuzzed = ROUTES.filter((r) => !(r.raw && !r.params && !r.query && !r.body));

describe('route fuzz: no 5xx, every 4xx in the error format', () => {
  afterEach(restoreMarket);

  test.each(fuzzed.map((r, i) => [r.method.toUpperCase(), r.path, r, i] as const))(
    '%s %s',
    async (method, path, route, index) => {
      const takesInput = Boolean(route.params || route.query || route.body);
      const schemas = { params: inputSchema(route.params), query: inputSchema(route.query), body: inputSchema(route.body) };
      const requestIn = (mode: Mode) =>
        fc.record({
          mode: fc.constant(mode),
          path: pathArb(route, schemas.params, mode),
          query: queryArb(schemas.query, mode),
          body: schemas.body ? bodyArb(schemas.body, mode) : fc.constant(undefined),
          token: tokenArb(route),
          idempotencyKey: route.idempotent ? idempotencyArb : fc.constant(null),
        });
      const request = fc.oneof(requestIn('valid'), requestIn('hostile'));
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const headers = r.idempotencyKey !== null ? { 'idempotency-key': r.idempotencyKey } : undefined;
          await sendAndCheck(
            { routePath: path, method, path: r.path, query: r.query, body: r.body, token: r.token, headers },
            tokens,
          );
        }),
        {
          seed: SEED + index,
          numRuns: RUNS_BY_ROUTE[`${method} ${path}`] ?? (takesInput ? RUNS : RUNS_WITHOUT_INPUT),
          endOnFailure: true,
        },
      );
    },
    60_000 + RUNS * 1000,
  );
});
