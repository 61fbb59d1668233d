/**
 * TEST_SCALE sizes the heavy workloads (the bank workload, ...): 1, the default, runs them
 * whole, as CI does; a developer on a busy machine runs them smaller with
 * `TEST_SCALE=0.2 npx jest test/integration/money`, the same checks on fewer operations.
 */
function parseScale(text: string | undefined): number {
  if (text === undefined || text === '') return 1;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0 || value > 10)
    throw new Error(`TEST_SCALE must be a number above 0, at most 10 (got ${text})`);
  return value;
}

export const TEST_SCALE = parseScale(process.env.TEST_SCALE);

/** `count` at the current scale, never under `floor` (below which a workload proves nothing). */
export function scaled(count: number, floor = 1): number {
  return Math.max(floor, Math.round(count * TEST_SCALE));
}
