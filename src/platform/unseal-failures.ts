import type { RedisClient } from './redis';

/**
 * Sealed values that could not be opened, counted per purpose and reason in one Redis hash,
 * so the API's /metrics reports the failures of every worker process too (as the queue
 * timings are) as `secrets_unseal_failures_total`.
 */
export function unsealFailuresKey(prefix: string): string {
  return `${prefix}:metrics:unseal_failures`;
}

/** Fire and forget: counting must never turn one failure into another. */
export function recordUnsealFailure(redis: RedisClient, prefix: string, purpose: string, reason: string): void {
  redis.hincrby(unsealFailuresKey(prefix), `${purpose}|${reason}`, 1).catch(() => undefined);
}

export async function readUnsealFailures(
  redis: RedisClient,
  prefix: string,
): Promise<Array<{ purpose: string; reason: string; count: number }>> {
  const raw = await redis.hgetall(unsealFailuresKey(prefix));
  return Object.entries(raw).map(([field, count]) => {
    const [purpose = '', reason = ''] = field.split('|');
    return { purpose, reason, count: Number(count) };
  });
}
