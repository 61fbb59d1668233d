import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Figure } from '../../bench/lib/harness';
import {
  againstRunBefore,
  againstTable,
  changeLine,
  latestFigures,
  renderTable,
  TABLE_END,
  TABLE_START,
  tableRatios,
  withTable,
} from '../../bench/lib/figures-table';

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
  expect(table).toContain('| GET /health | 400 rps | 1,000 rps | 0.40 | – | 12 | 5.5 | 5 × 3 s |');
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

test("when a figure has rounds, then its row shows the spread of the rounds' ratios", () => {
  const table = renderTable([figure('orders', 0.71, '2026-11-26T10:00:00Z', { spread: { min: 0.664, max: 0.7349 } })]);
  expect(table).toContain('| orders | 710 rps | 1,000 rps | 0.71 | 0.66 to 0.73 | 12 |');
});

test('when the page is rewritten, then each figure is set against the ratio the old table gave it', () => {
  const old = withTable(
    '# page\n' + TABLE_START + '\n' + TABLE_END + '\n',
    renderTable([
      figure('orders', 0.57, '2026-11-25T10:00:00Z'),
      figure('mails', 0.89, '2026-11-25T10:00:00Z', { failures: { candidate: 2, baseline: 0 } }),
    ]),
  );
  const previous = tableRatios(old);
  expect([...previous]).toEqual([
    ['orders', 0.57],
    ['mails', 0.89],
  ]);
  const changes = againstTable(previous, [
    figure('orders', 0.72, '2026-11-26T10:00:00Z'),
    figure('streams', 0.5, '2026-11-26T10:00:00Z'),
  ]);
  expect(changes).toEqual([
    { name: 'orders', before: 0.57, after: 0.72 },
    { name: 'streams', before: undefined, after: 0.5 },
  ]);
  expect(changeLine(changes[0]!, 0.05)).toBe(' 0.57 -> 0.72 (+0.15)  orders  (moved more than 0.05)');
  expect(changeLine(changes[1]!, 0.05)).toContain('new  -> 0.50');
});

test('when two runs were appended, then each figure is set against its own run before', () => {
  const lines = [
    figure('a', 0.5, '2026-11-26T10:00:00Z'),
    figure('b', 0.9, '2026-11-26T10:00:00Z'),
    figure('a', 0.53, '2026-11-26T11:00:00Z'),
  ]
    .map((f) => JSON.stringify(f))
    .join('\n');
  const changes = againstRunBefore(lines);
  expect(changes).toEqual([
    { name: 'a', before: 0.5, after: 0.53 },
    { name: 'b', before: undefined, after: 0.9 },
  ]);
  expect(changeLine(changes[0]!, 0.05)).toBe(' 0.50 -> 0.53 (+0.03)  a');
});
