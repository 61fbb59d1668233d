/**
 * Rewrites the figures table of README.md from bench/results/latest.json, which every
 * benchmark run appends to:   npm run bench && npm run bench:readme
 * The published numbers are then always the ones measured, with the machine, Node version and date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { latestFigures, renderTable, withTable } from '../bench/lib/readme-table';
import { RESULTS_FILE } from '../bench/lib/harness';

async function main(): Promise<void> {
  const readmePath = join(__dirname, '..', 'README.md');
  const figures = latestFigures(readFileSync(RESULTS_FILE, 'utf8'));
  const readme = withTable(readFileSync(readmePath, 'utf8'), renderTable(figures));
  const style = (await resolveConfig(readmePath)) ?? {};
  writeFileSync(readmePath, await format(readme, { ...style, parser: 'markdown', filepath: readmePath }));
  console.log(`README.md: ${figures.length} figures from ${RESULTS_FILE}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
