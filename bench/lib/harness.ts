import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { at, call, measure, nextSeq, type LoadOptions, type LoadResult } from './load';

export const BENCH_DIR = path.resolve(__dirname, '..');
const REPO_ROOT = path.dirname(BENCH_DIR);
export const RESULTS_FILE = path.join(BENCH_DIR, 'results', 'latest.json');

export interface ServerSpec {
  /** Child entry file, relative to bench/ or absolute. It prints `{"port":N}` once listening (see servers/announce.ts). */
  entry: string;
  env?: Record<string, string>;
  /** Shown in forwarded output and errors; defaults to the entry's file name. */
  name?: string;
  startTimeoutMs?: number;
}

export interface Server {
  name: string;
  port: number;
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
  machine: { cpus: number; node: string };
  date: string;
}

/** A module under bench/ named `<name>.bench.ts` exports this as `run`. */
export type Bench = (h: Harness) => Promise<Figure[]>;

// process.cpuUsage counts GC and libuv threads too, so a saturated main thread reads a little under or over 1.
const GENERATOR_SATURATED = 0.9;

const DEFAULTS = { rounds: 5, connections: 32, durationMs: 3000, warmupMs: 1000 };

/** For a quick smoke run: these override every bench's own choice. */
const OVERRIDES = {
  rounds: numberFromEnv('BENCH_ROUNDS'),
  durationMs: numberFromEnv('BENCH_DURATION_MS'),
  warmupMs: numberFromEnv('BENCH_WARMUP_MS'),
};

// Every child of this process, whichever harness started it: the exit hook below must reach them all.
const children = new Set<ChildProcess>();

export class Harness {
  private readonly servers: Server[] = [];

  /** Starts a server in a child process, so it never shares an event loop (or a core's time slices) with the load generator. */
  async start(spec: ServerSpec): Promise<Server> {
    const entry = path.resolve(BENCH_DIR, spec.entry);
    const name = spec.name ?? path.basename(entry, '.ts');
    const child = spawn(process.execPath, ['--import', 'tsx', entry], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...spec.env },
      // The IPC channel carries nothing; it closes when we die, which tells the child to stop.
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    children.add(child);
    child.once('exit', () => children.delete(child));
    let port: number;
    try {
      port = await waitForPort(child, name, spec.startTimeoutMs ?? 60_000);
    } catch (err) {
      await stopChild(child);
      throw err;
    }
    const server: Server = {
      name,
      port,
      url: (pathname) => `http://127.0.0.1:${port}${pathname}`,
      stop: () => stopChild(child),
    };
    this.servers.push(server);
    return server;
  }

  /** Interleaved rounds (candidate, baseline, candidate, ...) so drift on the machine hits both sides alike. */
  async compare(spec: CompareSpec): Promise<Figure> {
    const rounds = OVERRIDES.rounds ?? spec.rounds ?? DEFAULTS.rounds;
    const connections = spec.connections ?? DEFAULTS.connections;
    const durationMs = OVERRIDES.durationMs ?? spec.durationMs ?? DEFAULTS.durationMs;
    const warmupMs = OVERRIDES.warmupMs ?? spec.warmupMs ?? DEFAULTS.warmupMs;

    // A wrong token or URL would otherwise be measured at full speed as a fast 401 or 404.
    await preflight('candidate', spec.candidate);
    await preflight('baseline', spec.baseline);

    const results = { candidate: [] as LoadResult[], baseline: [] as LoadResult[] };
    for (let round = 1; round <= rounds; round++) {
      for (const side of ['candidate', 'baseline'] as const) {
        const result = await measure({ ...spec[side], connections, durationMs, warmupMs });
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
      machine: { cpus: os.cpus().length, node: process.version },
      date: new Date().toISOString(),
    };
    printFigure(figure);
    mkdirSync(path.dirname(RESULTS_FILE), { recursive: true });
    appendFileSync(RESULTS_FILE, `${JSON.stringify(figure)}\n`);
    return figure;
  }

  /** Stops every server this harness started. */
  async close(): Promise<void> {
    await Promise.all(this.servers.splice(0).map((s) => s.stop()));
  }
}

function waitForPort(child: ChildProcess, name: string, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: no {"port":N} line on stdout within ${timeoutMs} ms`)), timeoutMs);
    const onExit = (code: number | null, signal: string | null) => {
      clearTimeout(timer);
      reject(new Error(`${name}: exited (${signal ?? `code ${code}`}) before announcing its port`));
    };
    child.once('exit', onExit);
    // Reading goes on after the port line: a child whose stdout pipe fills up blocks.
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const port = portOf(line);
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

function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
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

function failures(results: LoadResult[]): number {
  return results.reduce((sum, r) => sum + r.errors + r.non2xx, 0);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function printFigure(f: Figure): void {
  const row = (side: 'candidate' | 'baseline', rps: number, p99: number) =>
    `  ${side.padEnd(10)} ${fmt(rps).padStart(10)} ${fmt(p99, 1).padStart(8)} ${fmt(f.loadCpu[side], 2).padStart(8)}   ` +
    f.roundsRps[side].map((r) => fmt(r)).join('  ');
  const lines = [
    '',
    `${f.name}  (${f.rounds} rounds x ${f.durationMs / 1000} s, ${f.connections} connections)`,
    `  ${'side'.padEnd(10)} ${'median rps'.padStart(10)} ${'p99 ms'.padStart(8)} ${'load cpu'.padStart(8)}   rps per round`,
    row('candidate', f.candidateRps, f.candidateP99Ms),
    row('baseline', f.baselineRps, f.baselineP99Ms),
    `  ratio ${f.ratio.toFixed(3)}`,
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
