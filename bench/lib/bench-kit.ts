import { Client } from 'pg';
import type { Server } from './harness';
import { call } from './load';

/**
 * What every service benchmark needs besides the harness: a database of its own run, a
 * checked call to the service, the median and progress lines on stderr.
 */

/** Where benchmark databases live; each run creates one of its own below it and drops it. */
export const BASE_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/trading_bench';

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export async function dropDatabase(database: string): Promise<void> {
  const client = new Client({ connectionString: withDatabase(BASE_DATABASE_URL, 'postgres') });
  await client.connect();
  try {
    await client.query(`drop database if exists "${database.replace(/"/g, '""')}" with (force)`);
  } finally {
    await client.end();
  }
}

/** One call to the service during set-up or checks: anything but the expected status stops the run. */
export async function request<T>(
  api: Server,
  method: string,
  path: string,
  token: string,
  body: unknown,
  status: number | number[],
): Promise<T> {
  const reply = await call(api.url(path), {
    method,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    body: body === undefined ? undefined : (body as object),
  });
  if (!(Array.isArray(status) ? status : [status]).includes(reply.status)) {
    throw new Error(`${method} ${path} answered ${reply.status}: ${reply.body.slice(0, 300)}`);
  }
  return (reply.body ? JSON.parse(reply.body) : undefined) as T;
}

/** The median of the numbers given, NaN ignored (a round that measured nothing); NaN when none. */
export function median(values: number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A progress printer for one benchmark: lines on stderr, so results on stdout stay clean. */
export function progressOf(bench: string): (message: string) => void {
  return (message) => process.stderr.write(`  ${bench}: ${message}\n`);
}
