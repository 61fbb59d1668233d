import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

export interface ServiceProcess {
  child: ChildProcess;
  logs: Array<Record<string, unknown>>;
  stderr: () => string;
  exited: Promise<number | null>;
  /** The first log line with this message, waiting up to `timeoutMs`. */
  waitForLog(msg: string, timeoutMs?: number): Promise<Record<string, unknown>>;
}

/** Runs `src/main.ts` as its own process, as `npm start` would, with only the given environment. */
export function spawnService(env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'main.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  let err = '';
  let pending = '';
  const waiters: Array<() => void> = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      logs.push(JSON.parse(line));
      waiters.splice(0).forEach((w) => w());
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    logs,
    stderr: () => err,
    exited,
    waitForLog(msg, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "${msg}" log within ${timeoutMs} ms; stderr: ${err}`)), timeoutMs);
        const check = () => {
          const line = logs.find((l) => l.msg === msg);
          if (line) {
            clearTimeout(timer);
            resolve(line);
          } else waiters.push(check);
        };
        exited.then(() => {
          if (!logs.some((l) => l.msg === msg)) {
            clearTimeout(timer);
            reject(new Error(`process exited before "${msg}"; stderr: ${err}`));
          }
        });
        check();
      });
    },
  };
}
