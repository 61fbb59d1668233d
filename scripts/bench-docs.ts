/**
 * Rewrites the figures table of docs/benchmarks.md from bench/results/latest.json, which every
 * benchmark run appends to:   npm run bench && npm run bench:docs
 * The published numbers are then always the ones measured, with the machine, Node version and date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { latestFigures, renderTable, withTable } from '../bench/lib/figures-table';
import { RESULTS_FILE } from '../bench/lib/harness';

async function main(): Promise<void> {
  const pagePath = join(__dirname, '..', 'docs', 'benchmarks.md');
  const figures = latestFigures(readFileSync(RESULTS_FILE, 'utf8'));
  const page = withTable(readFileSync(pagePath, 'utf8'), renderTable(figures));
  const style = (await resolveConfig(pagePath)) ?? {};
  writeFileSync(pagePath, await format(page, { ...style, parser: 'markdown', filepath: pagePath }));
  console.log(`docs/benchmarks.md: ${figures.length} figures from ${RESULTS_FILE}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
