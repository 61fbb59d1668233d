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
    const spread = f.spread ? `${f.spread.min.toFixed(2)} to ${f.spread.max.toFixed(2)}` : '–';
    return `| ${f.name}${failed} | ${value(f.candidateRps)} | ${value(f.baselineRps)} | ${f.ratio.toFixed(2)} | ${spread} | ${ms(f.candidateP99Ms)} | ${ms(f.baselineP99Ms)} | ${f.rounds} × ${f.batch ? 'batch' : `${f.durationMs / 1000} s`} |`;
  });
  return [
    `Measured on ${machines.join(', ')}, Node ${nodes.join(', ')}, ${when}; medians of interleaved rounds.`,
    '',
    '| Figure | Service | Baseline | Ratio | Rounds’ ratios | Service p99 ms | Baseline p99 ms | Rounds |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
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

/** The ratio of each figure in the table a page holds now (before it is rewritten), by name. */
export function tableRatios(page: string): Map<string, number> {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  const ratios = new Map<string, number>();
  if (start < 0 || end < start) return ratios;
  let ratioColumn = -1;
  for (const line of page.slice(start, end).split('\n')) {
    if (!line.startsWith('|')) continue;
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    if (ratioColumn < 0) {
      ratioColumn = cells.indexOf('Ratio');
      continue;
    }
    const ratio = Number(cells[ratioColumn]);
    if (cells[0] && Number.isFinite(ratio) && !/^-+$/.test(cells[0]))
      ratios.set(cells[0].replace(' (requests failed: suspect)', ''), ratio);
  }
  return ratios;
}

/** One figure's ratio now against an earlier one of the same name (undefined: not measured then). */
export interface RatioChange {
  name: string;
  before?: number;
  after: number;
}

/** The latest figures against the table a page held: every figure, in the order measured. */
export function againstTable(previous: Map<string, number>, figures: Figure[]): RatioChange[] {
  return figures.map((f) => ({ name: f.name, before: previous.get(f.name), after: f.ratio }));
}

/**
 * Each figure's latest ratio against the one measured before it (the run before, when whole runs
 * are appended one after the other): how far the same code moves from run to run.
 */
export function againstRunBefore(jsonLines: string): RatioChange[] {
  const byName = new Map<string, number[]>();
  for (const line of jsonLines.split('\n')) {
    if (!line.trim()) continue;
    const f = JSON.parse(line) as Figure;
    byName.set(f.name, [...(byName.get(f.name) ?? []), f.ratio]);
  }
  return [...byName].map(([name, ratios]) => ({ name, before: ratios.at(-2), after: ratios.at(-1)! }));
}

/** A change as one line: `0.57 -> 0.64 (+0.07)  name`, flagged when it moved more than `tolerance`. */
export function changeLine({ name, before, after }: RatioChange, tolerance: number): string {
  if (before === undefined) return `  new  -> ${after.toFixed(2)}          ${name}`;
  const delta = after - before;
  const flag = Math.abs(delta) > tolerance ? `  (moved more than ${tolerance.toFixed(2)})` : '';
  return `${before.toFixed(2).padStart(5)} -> ${after.toFixed(2)} (${delta >= 0 ? '+' : ''}${delta.toFixed(2)})  ${name}${flag}`;
}
