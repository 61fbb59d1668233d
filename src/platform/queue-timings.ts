import type { RedisClient } from './redis';

/**
 * Job wait and run times per queue, as Prometheus histograms that cover every worker
 * process. Worker processes serve no HTTP, so each records its observations into Redis
 * (one hash of cumulative bucket counts per queue and kind) and the API's /metrics reads
 * them at scrape time. Wait time runs from when a job became runnable (added, or its delay
 * over) to when a worker took it: what an autoscaler scales worker pools on.
 */
export const TIMING_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900] as const;

export type TimingKind = 'wait' | 'duration';

export function timingKey(prefix: string, kind: TimingKind, queue: string): string {
  return `${prefix}:metrics:job_${kind}:${queue}`;
}

/** ARGV: the seconds, then the buckets to count the observation in. Atomic, like the MULTI it replaces. */
const OBSERVE = `for i = 2, #ARGV do redis.call('hincrby', KEYS[1], ARGV[i], 1) end
redis.call('hincrbyfloat', KEYS[1], 'sum', ARGV[1])`;

/**
 * Adds one observation (fire and forget: metrics must never fail a job). One script, not a
 * MULTI: every worker records two a job, and ioredis builds each MULTI's pipeline by copying
 * every script defined on the connection (BullMQ's dozens), which made this the largest item
 * of ioredis in a tick worker's profile.
 */
export function recordTiming(redis: RedisClient, prefix: string, kind: TimingKind, queue: string, seconds: number): void {
  if (!Number.isFinite(seconds) || seconds < 0) return;
  const buckets = TIMING_BUCKETS.filter((le) => seconds <= le).map(String);
  redis.eval(OBSERVE, 1, timingKey(prefix, kind, queue), String(seconds), ...buckets, '+Inf').catch(() => undefined);
}

export interface HistogramSnapshot {
  buckets: Array<{ le: string; count: number }>;
  sum: number;
  count: number;
}

/** What the workers recorded for one queue and kind, cumulative as Prometheus wants it. */
export async function readTiming(
  redis: RedisClient,
  prefix: string,
  kind: TimingKind,
  queue: string,
): Promise<HistogramSnapshot> {
  const raw = await redis.hgetall(timingKey(prefix, kind, queue));
  const count = Number(raw['+Inf'] ?? 0);
  return {
    buckets: [...TIMING_BUCKETS.map((le) => ({ le: String(le), count: Number(raw[String(le)] ?? 0) })), { le: '+Inf', count }],
    sum: Number(raw.sum ?? 0),
    count,
  };
}
