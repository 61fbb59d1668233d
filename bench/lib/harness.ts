import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { at, call, measure, nextSeq, type LoadOptions, type LoadResult } from './load';
import { median } from './bench-kit';

export const BENCH_DIR = path.resolve(__dirname, '..');
const REPO_ROOT = path.dirname(BENCH_DIR);
export const RESULTS_FILE = path.join(BENCH_DIR, 'results', 'latest.json');

/**
 * Node flags that run a child as `npm start` would run it after `tsc`: TypeScript compiled by
 * TypeScript's own transpiler (lib/register-ts.js) rather than by tsx's esbuild.
 */
export const AS_COMPILED = ['--enable-source-maps', '--require', path.join(BENCH_DIR, 'lib', 'register-ts.js')];

/**
 * How service and worker children run: compiled, plus BENCH_CHILD_FLAGS (for example
 * `--cpu-prof --cpu-prof-dir=/tmp/prof`) to see where their time goes.
 */
export const CHILD_EXEC_ARGV = [...AS_COMPILED, ...(process.env.BENCH_CHILD_FLAGS ?? '').split(' ').filter(Boolean)];

export interface ServerSpec {
  /** Child entry file, relative to bench/ or absolute. It prints `{"port":N}` once listening (see servers/announce.ts). */
  entry: string;
  env?: Record<string, string>;
  /** Shown in forwarded output and errors; defaults to the entry's file name. */
  name?: string;
  startTimeoutMs?: number;
  /** What the child prints once it is up: `{"port":N}` (the default), or `{"ready":true}` for a child that serves no port, e.g. a worker. */
  announces?: 'port' | 'ready';
  /** Node flags that load TypeScript; defaults to tsx (`--import tsx`). See AS_COMPILED. */
  execArgv?: string[];
}

export interface Server {
  name: string;
  /** 0 for a child that announces `{"ready":true}`. */
  port: number;
  /** The child's process id, e.g. to read its CPU time from /proc. */
  pid: number;
  url(pathname: string): string;
  stop(): Promise<void>;
}

/** What one side of a comparison sends, and where. */
export type Target = Omit<LoadOptions, 'connections' | 'durationMs' | 'warmupMs'>;

export interface CompareSpec {
  name: string;
  candidate: Target;
  baseline: Target;
  rounds?: number;
  connections?: number;
  durationMs?: number;
  warmupMs?: number;
}

export interface Figure {
  name: string;
  candidateRps: number;
  baselineRps: number;
  /** median(candidate rps) / median(baseline rps): 1 means as fast as the baseline, 0.25 a quarter of it. */
  ratio: number;
  /**
   * Each round's own ratio (its candidate side over the baseline side measured next to it) and
   * their range: how far the figure would move with the rounds alone. Absent in older results.
   */
  roundRatios?: number[];
  spread?: { min: number; max: number };
  candidateP99Ms: number;
  baselineP99Ms: number;
  rounds: number;
  connections: number;
  durationMs: number;
  roundsRps: { candidate: number[]; baseline: number[] };
  /** Socket errors and non-2xx responses over all rounds; anything but 0 makes the figure suspect. */
  failures: { candidate: number; baseline: number };
  /** Median share of a core the load generator used; near 1 that side's rps is the generator's limit, not the server's. */
  loadCpu: { candidate: number; baseline: number };
  /** Where it was measured: core count, the CPU's model name, Node version. */
  machine: { cpus: number; model?: string; node: string };
  date: string;
  /**
   * Only on batch figures (Harness.record), where each round is one timed batch of work instead of
   * a closed loop: rps is units per second, the p99s are of the rounds' wall times, and durationMs
   * is the candidate's median wall time.
   */
  batch?: { unit: string; size: number; candidateMs: number[]; baselineMs: number[]; detail?: Record<string, unknown> };
}

/** How long a closed-loop side runs, and how many requests it keeps in flight. */
export interface RunWindow {
  connections: number;
  durationMs: number;
  warmupMs: number;
}

export interface RunsSpec {
  name: string;
  candidate: (window: RunWindow) => Promise<LoadResult>;
  baseline: (window: RunWindow) => Promise<LoadResult>;
  rounds?: number;
  connections?: number;
  durationMs?: number;
  warmupMs?: number;
}

/** One timed batch of work, measured by the bench itself. */
export interface BatchRound {
  /** Wall time of the batch. */
  ms: number;
  /** Units that failed (should have been done but were not); anything but 0 makes the figure suspect. */
  failures?: number;
  /** Share of a core this process used during the batch (on the baseline side it is often the baseline itself). */
  loadCpu?: number;
  /** Anything else worth keeping with the round, e.g. where the time went. */
  detail?: Record<string, unknown>;
}

export interface BatchSpec {
  name: string;
  /** What one unit of work is, e.g. "tickets": rates are units per second. */
  unit: string;
  /** Units in every batch. */
  size: number;
  /** Units in flight at once on each side. */
  connections: number;
  candidate: BatchRound[];
  baseline: BatchRound[];
  detail?: Record<string, unknown>;
}

/** A module under bench/ named `<name>.bench.ts` exports this as `run`. */
export type Bench = (h: Harness) => Promise<Figure[]>;

// process.cpuUsage counts GC and libuv threads too, so a saturated main thread reads a little under or over 1.
const GENERATOR_SATURATED = 0.9;

const DEFAULTS = { rounds: 5, connections: 32, durationMs: 3000, warmupMs: 1000 };
/**
 * This host's speed drifts by 10 to 40 percent from one second to the next (other tenants,
 * frequency scaling): a side measured for 3 s whole and then the other side for 3 s saw
 * different machines, and one run's rounds of the same comparison ranged from 0.81 to 1.27.
 * So a round's window is cut into slices of about this long, the sides taking turns
 * (candidate, baseline, baseline, candidate, ...), and a side's round is the sum of its
 * slices: both sides sample the same stretch of the machine's drift.
 */
const SLICE_MS = 1000;
/** Each slice after the round's first fills its connections again before it counts. */
const SLICE_WARMUP_MS = 200;
/**
 * Before the first round each side runs this long unmeasured: a freshly started child is
 * still compiling its hot paths, and its first rounds were up to half as fast as the last.
 */
const SETTLE_MS = 3000;

/** For a quick smoke run: these override every bench's own choice. */
const OVERRIDES = {
  rounds: numberFromEnv('BENCH_ROUNDS'),
  durationMs: numberFromEnv('BENCH_DURATION_MS'),
  warmupMs: numberFromEnv('BENCH_WARMUP_MS'),
};

/**
 * BENCH_PIN=`<server cpus>/<load cpus>` (for example `1/0`, taskset's lists): every child
 * server runs on the first set and this process (the load generator, and the baselines that
 * run in it) on the second, so neither takes time slices from the other. Postgres and Redis
 * stay wherever the scheduler puts them. Unset: nothing is pinned.
 */
const PIN = pinningFromEnv();
/**
 * How long a child may take to announce itself. A compiled child transpiles the service's
 * TypeScript as it loads, and a worker starts its queues: on a busy 2-core machine that took
 * over a minute, so a shorter wait failed benches that would have measured fine.
 */
const START_TIMEOUT_MS = 180_000;
if (PIN) execFileSync('taskset', ['-a', '-p', '-c', PIN.load, String(process.pid)], { stdio: 'ignore' });

function pinningFromEnv(): { server: string; load: string } | undefined {
  const text = process.env.BENCH_PIN;
  if (!text) return undefined;
  const match = /^([\d,-]+)\/([\d,-]+)$/.exec(text);
  if (!match) throw new Error(`BENCH_PIN must read <server cpus>/<load cpus>, e.g. 1/0 (got ${JSON.stringify(text)})`);
  return { server: match[1]!, load: match[2]! };
}

// Every child of this process, whichever harness started it: the exit hook below must reach them all.
const children = new Set<ChildProcess>();

export class Harness {
  private readonly servers: Server[] = [];

  /** Starts a server in a child process, so it never shares an event loop (or a core's time slices) with the load generator. */
  async start(spec: ServerSpec): Promise<Server> {
    const entry = path.resolve(BENCH_DIR, spec.entry);
    const name = spec.name ?? path.basename(entry, '.ts');
    const args = [...(spec.execArgv ?? ['--import', 'tsx']), entry];
    const [command, argv] = PIN ? ['taskset', ['-c', PIN.server, process.execPath, ...args]] : [process.execPath, args];
    const child = spawn(command, argv, {
      cwd: REPO_ROOT,
      env: { ...process.env, ...spec.env },
      // The IPC channel carries nothing; it closes when we die, which tells the child to stop.
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    children.add(child);
    child.once('exit', () => children.delete(child));
    let port: number;
    try {
      port = await waitForPort(child, name, spec.startTimeoutMs ?? START_TIMEOUT_MS, spec.announces ?? 'port');
    } catch (err) {
      await stopChild(child);
      throw err;
    }
    const server: Server = {
      name,
      port,
      pid: child.pid!,
      url: (pathname) => {
        if (port === 0) throw new Error(`${name} serves no port`);
        return `http://127.0.0.1:${port}${pathname}`;
      },
      stop: () => stopChild(child),
    };
    this.servers.push(server);
    return server;
  }

  /** Interleaved rounds (candidate, baseline, candidate, ...) so drift on the machine hits both sides alike. */
  /**
   * A worker-tier child (servers/worker.ts, ROLE=worker on the bench's database and queue
   * prefix as `env` says), run as CHILD_EXEC_ARGV unless `execArgv` says otherwise; it announces ready.
   */
  startWorker(name: string, env: Record<string, string>, execArgv: string[] = CHILD_EXEC_ARGV): Promise<Server> {
    return this.start({ entry: 'servers/worker.ts', name, announces: 'ready', execArgv, env });
  }

  async compare(spec: CompareSpec): Promise<Figure> {
    // A wrong token or URL would otherwise be measured at full speed as a fast 401 or 404.
    await preflight('candidate', spec.candidate);
    await preflight('baseline', spec.baseline);
    return this.compareRuns({
      ...spec,
      candidate: (window) => measure({ ...spec.candidate, ...window }),
      baseline: (window) => measure({ ...spec.baseline, ...window }),
    });
  }

  /**
   * The same interleaved comparison for sides that are not both HTTP targets: each side is a
   * closed loop of its own, run for the window given (e.g. the service through HTTP against the
   * same SQL transaction sent straight through `pg`, see transfers.bench.ts).
   */
  async compareRuns(spec: RunsSpec): Promise<Figure> {
    const rounds = OVERRIDES.rounds ?? spec.rounds ?? DEFAULTS.rounds;
    const connections = spec.connections ?? DEFAULTS.connections;
    const durationMs = OVERRIDES.durationMs ?? spec.durationMs ?? DEFAULTS.durationMs;
    const warmupMs = OVERRIDES.warmupMs ?? spec.warmupMs ?? DEFAULTS.warmupMs;

    const slices = Math.max(1, Math.round(durationMs / SLICE_MS));
    const sliceMs = durationMs / slices;

    for (const side of ['candidate', 'baseline'] as const) {
      await spec[side]({ connections, durationMs: SETTLE_MS, warmupMs: 0 });
    }
    const results = { candidate: [] as LoadResult[], baseline: [] as LoadResult[] };
    for (let round = 1; round <= rounds; round++) {
      const parts = { candidate: [] as LoadResult[], baseline: [] as LoadResult[] };
      for (let slice = 0; slice < slices; slice++) {
        // Alternating which side goes first cancels a drift that runs the same way through the round.
        const order = slice % 2 === 0 ? (['candidate', 'baseline'] as const) : (['baseline', 'candidate'] as const);
        for (const side of order) {
          const window = { connections, durationMs: sliceMs, warmupMs: slice === 0 ? warmupMs : SLICE_WARMUP_MS };
          parts[side].push(await spec[side](window));
        }
      }
      for (const side of ['candidate', 'baseline'] as const) {
        const result = combineSlices(parts[side], sliceMs);
        results[side].push(result);
        process.stderr.write(`  ${spec.name}: round ${round}/${rounds} ${side} ${fmt(result.rps)} rps\n`);
      }
    }

    const candidateRps = median(results.candidate.map((r) => r.rps));
    const baselineRps = median(results.baseline.map((r) => r.rps));
    const figure: Figure = {
      name: spec.name,
      candidateRps,
      baselineRps,
      ratio: candidateRps / baselineRps,
      ...spreadOf(
        results.candidate.map((r) => r.rps),
        results.baseline.map((r) => r.rps),
      ),
      candidateP99Ms: median(results.candidate.map((r) => r.p99Ms)),
      baselineP99Ms: median(results.baseline.map((r) => r.p99Ms)),
      rounds,
      connections,
      durationMs,
      roundsRps: { candidate: results.candidate.map((r) => r.rps), baseline: results.baseline.map((r) => r.rps) },
      failures: { candidate: failures(results.candidate), baseline: failures(results.baseline) },
      loadCpu: {
        candidate: round2(median(results.candidate.map((r) => r.loadCpu))),
        baseline: round2(median(results.baseline.map((r) => r.loadCpu))),
      },
      machine: machineOf(),
      date: new Date().toISOString(),
    };
    printFigure(figure);
    appendFigure(figure);
    return figure;
  }

  /**
   * A figure from batches the bench timed itself (one batch job per round, e.g. closing 1,000
   * orders), for work that is not a stream of requests. The bench interleaves the rounds.
   */
  record(spec: BatchSpec): Figure {
    const rate = (r: BatchRound) => spec.size / (r.ms / 1000);
    const candidateRps = median(spec.candidate.map(rate));
    const baselineRps = median(spec.baseline.map(rate));
    const ms = (rounds: BatchRound[]) => rounds.map((r) => Math.round(r.ms));
    const p99 = (rounds: BatchRound[]) => percentile(ms(rounds), 0.99);
    const cpu = (rounds: BatchRound[]) => round2(median(rounds.map((r) => r.loadCpu ?? NaN)));
    const figure: Figure = {
      name: spec.name,
      candidateRps,
      baselineRps,
      ratio: candidateRps / baselineRps,
      ...spreadOf(spec.candidate.map(rate), spec.baseline.map(rate)),
      candidateP99Ms: p99(spec.candidate),
      baselineP99Ms: p99(spec.baseline),
      rounds: Math.max(spec.candidate.length, spec.baseline.length),
      connections: spec.connections,
      durationMs: median(ms(spec.candidate)),
      roundsRps: { candidate: spec.candidate.map(rate), baseline: spec.baseline.map(rate) },
      failures: {
        candidate: spec.candidate.reduce((sum, r) => sum + (r.failures ?? 0), 0),
        baseline: spec.baseline.reduce((sum, r) => sum + (r.failures ?? 0), 0),
      },
      loadCpu: { candidate: cpu(spec.candidate), baseline: cpu(spec.baseline) },
      machine: machineOf(),
      date: new Date().toISOString(),
      batch: {
        unit: spec.unit,
        size: spec.size,
        candidateMs: ms(spec.candidate),
        baselineMs: ms(spec.baseline),
        detail: {
          ...spec.detail,
          rounds: {
            candidate: spec.candidate.map((r) => r.detail ?? {}),
            baseline: spec.baseline.map((r) => r.detail ?? {}),
          },
        },
      },
    };
    printFigure(figure);
    appendFigure(figure);
    return figure;
  }

  /** Stops every server this harness started. */
  async close(): Promise<void> {
    await Promise.all(this.servers.splice(0).map((s) => s.stop()));
  }
}

function waitForPort(child: ChildProcess, name: string, timeoutMs: number, announces: 'port' | 'ready'): Promise<number> {
  const expected = announces === 'port' ? '{"port":N}' : '{"ready":true}';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: no ${expected} line on stdout within ${timeoutMs} ms`)), timeoutMs);
    const onExit = (code: number | null, signal: string | null) => {
      clearTimeout(timer);
      reject(
        new Error(
          `${name}: exited (${signal ?? `code ${code}`}) before announcing ${announces === 'port' ? 'its port' : 'it was ready'}`,
        ),
      );
    };
    child.once('exit', onExit);
    // Reading goes on after the port line: a child whose stdout pipe fills up blocks.
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const port = announces === 'port' ? portOf(line) : readyOf(line);
      if (port === undefined) {
        process.stderr.write(`[${name}] ${line}\n`);
        return;
      }
      clearTimeout(timer);
      child.off('exit', onExit);
      resolve(port);
    });
  });
}

function portOf(line: string): number | undefined {
  try {
    const value: unknown = JSON.parse(line);
    const port = (value as { port?: unknown } | null)?.port;
    return Number.isInteger(port) ? (port as number) : undefined;
  } catch {
    return undefined;
  }
}

/** 0 for a `{"ready":true}` line. */
function readyOf(line: string): 0 | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return (value as { ready?: unknown } | null)?.ready === true ? 0 : undefined;
  } catch {
    return undefined;
  }
}

/** A child writing a CPU profile on its way out (BENCH_CHILD_FLAGS) may take a while on a loaded machine. */
const STOP_GRACE_MS = CHILD_EXEC_ARGV.some((f) => f.startsWith('--cpu-prof')) ? 60_000 : 5000;

function stopChild(child: ChildProcess, graceMs = STOP_GRACE_MS): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function preflight(side: string, target: Target): Promise<void> {
  const seq = nextSeq();
  const reply = await call(target.url, { method: target.method, headers: at(target.headers, seq), body: at(target.body, seq) });
  if (reply.status < 200 || reply.status > 299) {
    throw new Error(`${side}: ${target.method ?? 'GET'} ${target.url} answered ${reply.status}: ${reply.body.slice(0, 300)}`);
  }
}

/**
 * One side's round from its slices: rates from the summed requests over the summed windows,
 * latency percentiles as the median of the slices' (the slices' latencies are not kept).
 */
function combineSlices(parts: LoadResult[], sliceMs: number): LoadResult {
  if (parts.length === 1) return parts[0]!;
  const requests = parts.reduce((sum, p) => sum + p.requests, 0);
  return {
    requests,
    rps: requests / ((parts.length * sliceMs) / 1000),
    p50Ms: median(parts.map((p) => p.p50Ms)),
    p99Ms: median(parts.map((p) => p.p99Ms)),
    errors: parts.reduce((sum, p) => sum + p.errors, 0),
    non2xx: parts.reduce((sum, p) => sum + p.non2xx, 0),
    loadCpu: median(parts.map((p) => p.loadCpu)),
  };
}

function failures(results: LoadResult[]): number {
  return results.reduce((sum, r) => sum + r.errors + r.non2xx, 0);
}

function appendFigure(figure: Figure): void {
  mkdirSync(path.dirname(RESULTS_FILE), { recursive: true });
  appendFileSync(RESULTS_FILE, `${JSON.stringify(figure)}\n`);
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

export function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function printFigure(f: Figure): void {
  if (f.batch) return printBatchFigure(f, f.batch);
  const row = (side: 'candidate' | 'baseline', rps: number, p99: number) =>
    `  ${side.padEnd(10)} ${fmt(rps).padStart(10)} ${fmt(p99, 1).padStart(8)} ${fmt(f.loadCpu[side], 2).padStart(8)}   ` +
    f.roundsRps[side].map((r) => fmt(r)).join('  ');
  const lines = [
    '',
    `${f.name}  (${f.rounds} rounds x ${f.durationMs / 1000} s, ${f.connections} connections)`,
    `  ${'side'.padEnd(10)} ${'median rps'.padStart(10)} ${'p99 ms'.padStart(8)} ${'load cpu'.padStart(8)}   rps per round`,
    row('candidate', f.candidateRps, f.candidateP99Ms),
    row('baseline', f.baselineRps, f.baselineP99Ms),
    `  ratio ${ratioText(f)}`,
    ...spreadWarning(f),
  ];
  if (f.failures.candidate + f.failures.baseline > 0) {
    lines.push(
      `  WARNING: ${f.failures.candidate} candidate and ${f.failures.baseline} baseline requests failed: the ratio is suspect`,
    );
  }
  for (const side of ['candidate', 'baseline'] as const) {
    if (f.loadCpu[side] >= GENERATOR_SATURATED) {
      lines.push(
        `  WARNING: the load generator used a whole core on the ${side} side: its rps is the generator's ceiling, not the server's`,
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n\n`);
}

function printBatchFigure(f: Figure, batch: NonNullable<Figure['batch']>): void {
  const rate = `median ${batch.unit}/s`;
  const row = (side: 'candidate' | 'baseline', rps: number, ms: number[]) =>
    `  ${side.padEnd(10)} ${fmt(rps).padStart(rate.length)} ${fmt(median(ms)).padStart(9)} ${fmt(f.loadCpu[side], 2).padStart(8)}   ` +
    f.roundsRps[side].map((r) => fmt(r)).join('  ');
  const lines = [
    '',
    `${f.name}  (${f.rounds} rounds, batches of ${fmt(batch.size)} ${batch.unit}, ${f.connections} in flight)`,
    `  ${'side'.padEnd(10)} ${rate} ${'median ms'.padStart(9)} ${'load cpu'.padStart(8)}   ${batch.unit}/s per round`,
    row('candidate', f.candidateRps, batch.candidateMs),
    row('baseline', f.baselineRps, batch.baselineMs),
    `  ratio ${ratioText(f)}`,
    ...spreadWarning(f),
  ];
  if (f.failures.candidate + f.failures.baseline > 0) {
    lines.push(
      `  WARNING: ${f.failures.candidate} candidate and ${f.failures.baseline} baseline ${batch.unit} failed: the ratio is suspect`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n\n`);
}

/** Past this distance of a round's ratio from the figure's (either way) the figure is flagged as unsteady. */
export const SPREAD_WARN = 0.1;

/** The rounds' own ratios, paired as they ran (round i of the candidate beside round i of the baseline). */
export function spreadOf(candidate: number[], baseline: number[]): Pick<Figure, 'roundRatios' | 'spread'> {
  const roundRatios = candidate
    .map((c, i) => c / baseline[i]!)
    .filter((r) => Number.isFinite(r))
    .map((r) => Math.round(r * 1000) / 1000);
  if (roundRatios.length === 0) return {};
  return { roundRatios, spread: { min: Math.min(...roundRatios), max: Math.max(...roundRatios) } };
}

/** `0.412 (rounds 0.398 to 0.431)`. */
export function ratioText(f: Pick<Figure, 'ratio' | 'spread'>): string {
  return f.spread
    ? `${f.ratio.toFixed(3)} (rounds ${f.spread.min.toFixed(3)} to ${f.spread.max.toFixed(3)})`
    : f.ratio.toFixed(3);
}

/** Whether a round's ratio lies more than SPREAD_WARN (relative) from the figure's ratio. */
export function unsteady(f: Pick<Figure, 'ratio' | 'spread'>): boolean {
  if (!f.spread || !(f.ratio > 0)) return false;
  return f.spread.max > f.ratio * (1 + SPREAD_WARN) || f.spread.min < f.ratio * (1 - SPREAD_WARN);
}

function spreadWarning(f: Figure): string[] {
  if (!unsteady(f)) return [];
  return [
    `  WARNING: the rounds' ratios spread past ±${SPREAD_WARN * 100} % of the figure: rerun it with more or longer rounds (BENCH_ROUNDS, BENCH_DURATION_MS), or pinned (BENCH_PIN=1/0), before reading a change in it`,
  ];
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

function numberFromEnv(name: string): number | undefined {
  const text = process.env[name];
  if (!text) return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`${name} must be a positive whole number (got ${JSON.stringify(text)})`);
  return value;
}

// `exit` handlers cannot wait, so this is the last resort; orderly paths stop children with SIGTERM first.
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\n${signal}: stopping servers\n`);
    void Promise.all([...children].map((c) => stopChild(c, 2000))).finally(() =>
      process.exit(128 + os.constants.signals[signal]),
    );
  });
}

function machineOf(): Figure['machine'] {
  return { cpus: os.cpus().length, model: os.cpus()[0]?.model.trim(), node: process.version };
}
