import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** An error nobody caught ends the process with a non-zero code, logged with its request or job id. */
async function crash(mode: 'throw' | 'reject'): Promise<{ code: number | null; lines: Array<Record<string, unknown>> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'helpers', 'crash-entry.ts'), mode], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  const lines = out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { code, lines };
}

test('when a request handler throws where nobody catches it, then the process logs it fatal with the request id and exits 1', async () => {
  const { code, lines } = await crash('throw');
  expect(code).toBe(1);
  const fatal = lines.find((l) => l.level === 60);
  expect(fatal).toMatchObject({
    request_id: 'req-crash-1',
    kind: 'uncaughtException',
    err: { message: 'a bug in a request handler' },
  });
  expect(lines.map((l) => l.msg)).toContain('stopped cleanly');
});

test('when a promise nobody awaited rejects in a job, then the process logs it fatal with the job id and exits 1', async () => {
  const { code, lines } = await crash('reject');
  expect(code).toBe(1);
  expect(lines.find((l) => l.level === 60)).toMatchObject({
    job_id: 'job-crash-1',
    queue: 'mail',
    kind: 'unhandledRejection',
    err: { message: 'a promise nobody awaited' },
  });
});
