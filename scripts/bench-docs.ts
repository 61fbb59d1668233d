/**
 * Rewrites the figures table of docs/benchmarks.md from bench/results/latest.json, which every
 * benchmark run appends to:   npm run bench && npm run bench:docs
 * The published numbers are then always the ones measured, with the machine, Node version and date.
 * It prints each figure against the table it replaces (what moved since the page was last
 * written) and against the same figure's run before (two runs of the same code should agree
 * within ±0.05; a figure that moves more cannot tell a change of that size from noise).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { format, resolveConfig } from 'prettier';
import {
  againstRunBefore,
  againstTable,
  changeLine,
  latestFigures,
  renderTable,
  tableRatios,
  withTable,
} from '../bench/lib/figures-table';
import { RESULTS_FILE } from '../bench/lib/harness';

const RUN_TO_RUN = 0.05;

async function main(): Promise<void> {
  const pagePath = join(__dirname, '..', 'docs', 'benchmarks.md');
  const results = readFileSync(RESULTS_FILE, 'utf8');
  const figures = latestFigures(results);
  const old = readFileSync(pagePath, 'utf8');
  console.log('Against the table this replaces (ratio before -> now):');
  for (const change of againstTable(tableRatios(old), figures)) console.log(changeLine(change, RUN_TO_RUN));
  console.log(`\nAgainst the same figure's measurement before (agreement within ±${RUN_TO_RUN}):`);
  for (const change of againstRunBefore(results)) console.log(changeLine(change, RUN_TO_RUN));
  const page = withTable(old, renderTable(figures));
  const style = (await resolveConfig(pagePath)) ?? {};
  writeFileSync(pagePath, await format(page, { ...style, parser: 'markdown', filepath: pagePath }));
  console.log(`docs/benchmarks.md: ${figures.length} figures from ${RESULTS_FILE}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
