import type { Figure } from './harness';

/**
 * The figures table of docs/benchmarks.md, made from what the benchmarks recorded in bench/results (never
 * copied by hand): the latest figure of each name, with where and when it was measured.
 */
export const TABLE_START = '<!-- bench-table:start (npm run bench:docs writes this part) -->';
export const TABLE_END = '<!-- bench-table:end -->';

/** The figures of a results file (one JSON object a line), the latest of each name, in first-seen order. */
export function latestFigures(jsonLines: string): Figure[] {
  const byName = new Map<string, Figure>();
  for (const line of jsonLines.split('\n')) {
    if (!line.trim()) continue;
    const figure = JSON.parse(line) as Figure;
    byName.delete(figure.name); // re-insert: a re-measured figure keeps its place among the others
    byName.set(figure.name, figure);
  }
  return [...byName.values()];
}

/** The unit of a figure whose sides are speed-ups (see bench/bulk-close.bench.ts, scaling). */
export const SPEED_UP = '×';

const thousands = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(n < 10 ? 1 : 0) : '–');

export function renderTable(figures: Figure[]): string {
  if (figures.length === 0) return '_No figures recorded yet: run `npm run bench`, then `npm run bench:docs`._';
  const machines = [...new Set(figures.map((f) => `${f.machine.cpus} cores${f.machine.model ? ` (${f.machine.model})` : ''}`))];
  const nodes = [...new Set(figures.map((f) => f.machine.node))];
  const days = figures.map((f) => f.date.slice(0, 10)).sort();
  const when = days[0] === days[days.length - 1] ? days[0] : `${days[0]} to ${days[days.length - 1]}`;
  const rows = figures.map((f) => {
    const failed = f.failures.candidate + f.failures.baseline > 0 ? ' (requests failed: suspect)' : '';
    // A batch in the unit × is a ratio of two rates (a speed-up), not a rate: two decimals, no "/s".
    const value = (n: number) =>
      f.batch?.unit === SPEED_UP ? `${n.toFixed(2)} ${SPEED_UP}` : `${thousands(n)} ${f.batch ? `${f.batch.unit}/s` : 'rps'}`;
    return `| ${f.name}${failed} | ${value(f.candidateRps)} | ${value(f.baselineRps)} | ${f.ratio.toFixed(2)} | ${ms(f.candidateP99Ms)} | ${ms(f.baselineP99Ms)} | ${f.rounds} × ${f.batch ? 'batch' : `${f.durationMs / 1000} s`} |`;
  });
  return [
    `Measured on ${machines.join(', ')}, Node ${nodes.join(', ')}, ${when}; medians of interleaved rounds.`,
    '',
    '| Figure | Service | Baseline | Ratio | Service p99 ms | Baseline p99 ms | Rounds |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

/** The page with the part between the markers replaced; a page without both markers is refused. */
export function withTable(page: string, table: string): string {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`the page has no "${TABLE_START}" … "${TABLE_END}" part to write`);
  return `${page.slice(0, start + TABLE_START.length)}\n\n${table}\n\n${page.slice(end)}`;
}
