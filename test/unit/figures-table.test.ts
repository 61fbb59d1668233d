import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Figure } from '../../bench/lib/harness';
import { latestFigures, renderTable, TABLE_END, TABLE_START, withTable } from '../../bench/lib/figures-table';

const figure = (name: string, ratio: number, date: string, extra: Partial<Figure> = {}): Figure => ({
  name,
  candidateRps: 1000 * ratio,
  baselineRps: 1000,
  ratio,
  candidateP99Ms: 12.34,
  baselineP99Ms: 5.5,
  rounds: 5,
  connections: 8,
  durationMs: 3000,
  roundsRps: { candidate: [], baseline: [] },
  failures: { candidate: 0, baseline: 0 },
  loadCpu: { candidate: 0.1, baseline: 0.2 },
  machine: { cpus: 2, model: 'Test CPU', node: 'v24.21.0' },
  date,
  ...extra,
});

test('when a figure was measured twice, then the table shows the latest, with the machine, Node and dates', () => {
  const lines = [
    figure('GET /health', 0.3, '2026-11-20T10:00:00Z'),
    figure('logins', 0.8, '2026-11-21T10:00:00Z'),
    figure('GET /health', 0.4, '2026-11-23T10:00:00Z'),
  ]
    .map((f) => JSON.stringify(f))
    .join('\n');
  const figures = latestFigures(`${lines}\n`);
  expect(figures.map((f) => [f.name, f.ratio])).toEqual([
    ['logins', 0.8],
    ['GET /health', 0.4],
  ]);
  const table = renderTable(figures);
  expect(table).toContain('Measured on 2 cores (Test CPU), Node v24.21.0, 2026-11-21 to 2026-11-23');
  expect(table).toContain('| GET /health | 400 rps | 1,000 rps | 0.40 | 12 | 5.5 | 5 × 3 s |');
});

test('when a figure had failed requests or is a batch, then its row says so', () => {
  const table = renderTable([
    figure('bulk close', 0.5, '2026-11-23T10:00:00Z', {
      batch: { unit: 'tickets', size: 1000, candidateMs: [], baselineMs: [] },
      failures: { candidate: 1, baseline: 0 },
    }),
  ]);
  expect(table).toContain('| bulk close (requests failed: suspect) | 500 tickets/s | 1,000 tickets/s | 0.50 |');
});

test('when the page is rewritten, then only the part between the markers changes; without markers it is refused', () => {
  const page = `# Title\n\nbefore\n${TABLE_START}\nold table\n${TABLE_END}\nafter\n`;
  const out = withTable(page, 'NEW');
  expect(out).toBe(`# Title\n\nbefore\n${TABLE_START}\n\nNEW\n\n${TABLE_END}\nafter\n`);
  expect(() => withTable('# no markers', 'NEW')).toThrow('no "<!-- bench-table:start');
});

test('when docs/benchmarks.md is read, then it holds the markers npm run bench:docs writes between', () => {
  const page = readFileSync(join(__dirname, '..', '..', 'docs', 'benchmarks.md'), 'utf8');
  expect(() => withTable(page, 'NEW')).not.toThrow();
});
