import { readdirSync } from 'node:fs';
import path from 'node:path';
import { BENCH_DIR, fmt, Harness, RESULTS_FILE, unsteady, type Bench, type Figure } from './lib/harness';

/**
 * `tsx bench/run.ts [name ...]`: runs bench/<name>.bench.ts one after the other (all of them
 * when none is named), each with its own servers, then prints every figure once more.
 */
const SUFFIX = '.bench.ts';

async function main(): Promise<void> {
  const available = readdirSync(BENCH_DIR)
    .filter((file) => file.endsWith(SUFFIX))
    .map((file) => file.slice(0, -SUFFIX.length))
    .sort();
  // Accept `health`, `health.bench.ts` and `bench/health.bench.ts` alike.
  const wanted = process.argv.slice(2).map((arg) => path.basename(arg).replace(/\.bench\.ts$/, ''));
  const unknown = wanted.filter((name) => !available.includes(name));
  if (unknown.length > 0) throw new Error(`no such bench: ${unknown.join(', ')} (there are: ${available.join(', ')})`);

  const figures: Figure[] = [];
  // A bench that fails is reported at the end, after the others have run: a whole run takes
  // most of an hour, and one failing bench should not throw away the figures of the rest.
  const failed: string[] = [];
  for (const name of wanted.length > 0 ? wanted : available) {
    process.stderr.write(`== ${name}\n`);
    const { run } = (await import(path.join(BENCH_DIR, name + SUFFIX))) as { run: Bench };
    // One harness per bench: its servers stop before the next bench starts its own.
    const h = new Harness();
    try {
      figures.push(...(await run(h)));
    } catch (err) {
      failed.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
      process.stderr.write(`== ${name} failed: ${failed.at(-1)}\n`);
    } finally {
      await h.close();
    }
  }

  process.stdout.write(
    `${'ratio'.padStart(7)} ${'rounds'.padStart(13)} ${'candidate rps'.padStart(14)} ${'baseline rps'.padStart(13)}  figure\n`,
  );
  for (const f of figures) {
    const flags = [
      f.failures.candidate + f.failures.baseline > 0 ? '  (requests failed)' : '',
      unsteady(f) ? '  (rounds spread past ±10 %)' : '',
    ].join('');
    const rounds = f.spread ? `${f.spread.min.toFixed(2)} to ${f.spread.max.toFixed(2)}` : '';
    process.stdout.write(
      `${f.ratio.toFixed(3).padStart(7)} ${rounds.padStart(13)} ${fmt(f.candidateRps).padStart(14)} ${fmt(f.baselineRps).padStart(13)}  ${f.name}${flags}\n`,
    );
  }
  process.stdout.write(`\nappended to ${path.relative(process.cwd(), RESULTS_FILE)}\n`);
  if (failed.length > 0) throw new Error(`${failed.length} bench(es) failed:\n  ${failed.join('\n  ')}`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
