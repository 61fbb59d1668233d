import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * docker-compose.yml and the Dockerfile, read as Compose and Docker would (there is no
 * engine here): every service reports its health, a worker's check asks its own
 * WORKER_HTTP_PORT, and the one-shot demo seeds the stack's own database and queues. The
 * checks' `node -e` programs are run for real, against a listener on this machine.
 */
const ROOT = join(__dirname, '..', '..');
type Service = {
  image?: string;
  ports?: string[];
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test?: string[]; disable?: boolean };
  restart?: string;
  depends_on?: Record<string, { condition: string }>;
};
const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const services = Object.entries(compose.services);
const workers = services.filter(([, s]) => s.environment?.ROLE === 'worker');

/** Runs a check's `node -e` program with `env`, as the container would; its exit code. Not spawnSync: the listener below shares this event loop. */
function runCheck(test: string[], env: Record<string, string>): Promise<number | null> {
  const at = test.indexOf('-e');
  expect({ kind: test[0], program: test[1], flag: at }).toEqual({ kind: 'CMD', program: 'node', flag: 2 });
  const child = spawn(process.execPath, ['-e', test[at + 1]!], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: 'ignore',
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

/** A listener answering 200 on `path` only; its port. */
let server: Server;
let port: number;
const asked: string[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    asked.push(req.url ?? '');
    res.writeHead(req.url === '/health' || req.url === '/ready' ? 200 : 404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

test('when docker-compose is read, then every long-running service has a health check and the one-shot demo has none', () => {
  for (const [name, service] of services) {
    const oneShot = service.restart === 'no';
    expect({ name, check: oneShot ? service.healthcheck : Array.isArray(service.healthcheck?.test) }).toEqual({
      name,
      check: oneShot ? { disable: true } : true,
    });
  }
  expect(services.filter(([, s]) => s.restart === 'no').map(([n]) => n)).toEqual(['demo']);
});

test('when a worker’s health check runs, then it asks /health on WORKER_HTTP_PORT, and fails when nothing answers there', async () => {
  expect(workers.length).toBeGreaterThan(0);
  for (const [name, service] of workers) {
    expect({ name, port: service.environment!.WORKER_HTTP_PORT }).toEqual({ name, port: '9100' });
    asked.length = 0;
    expect(await runCheck(service.healthcheck!.test!, { WORKER_HTTP_PORT: String(port), PORT: '1' })).toBe(0);
    expect(asked).toEqual(['/health']);
    expect(await runCheck(service.healthcheck!.test!, { WORKER_HTTP_PORT: '1', PORT: String(port) })).toBe(1);
  }
});

test('when the api’s health check runs, then it asks /ready on PORT', async () => {
  asked.length = 0;
  expect(await runCheck(compose.services.api!.healthcheck!.test!, { PORT: String(port) })).toBe(0);
  expect(asked).toEqual(['/ready']);
});

test('when the image’s own HEALTHCHECK runs, then a worker is asked on WORKER_HTTP_PORT and any other role on PORT', async () => {
  const line = /^\s*CMD (\[.*\])$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8').split('HEALTHCHECK')[1]!)?.[1];
  const test = ['CMD', ...(JSON.parse(line!) as string[])];
  expect(await runCheck(test, { ROLE: 'worker', WORKER_HTTP_PORT: String(port), PORT: '1' })).toBe(0);
  expect(await runCheck(test, { ROLE: 'api', WORKER_HTTP_PORT: '1', PORT: String(port) })).toBe(0);
  expect(await runCheck(test, { ROLE: 'worker', WORKER_HTTP_PORT: '1', PORT: String(port) })).toBe(1);
});

test('when the demo runs, then it is one-shot, waits for a healthy api, and seeds the same database and queues', () => {
  const demo = compose.services.demo!;
  const api = compose.services.api!;
  expect(demo.restart).toBe('no');
  expect(demo.depends_on?.api).toEqual({ condition: 'service_healthy' });
  expect(demo.command).toEqual(['node', 'dist/demo/seed-demo.js']);
  // The image builds src/ into dist/: the script it runs is there.
  expect(existsSync(join(ROOT, 'src', 'demo', 'seed-demo.ts'))).toBe(true);
  for (const variable of ['DATABASE_URL', 'REDIS_URL', 'QUEUE_PREFIX', 'JWT_SECRET'])
    expect({ variable, value: demo.environment![variable] }).toEqual({ variable, value: api.environment![variable] });
  expect(demo.environment!.PORT).toBe(api.environment!.PORT);
});

test('when docker-compose is read, then every image is pinned to a version and every published port is on the loopback', () => {
  for (const [name, service] of services.filter(([, s]) => s.image !== undefined)) {
    // A tag with a minor version at least: `latest` or a bare major moves under the stack.
    expect({ name, pinned: /:v?\d+\.\d+(\.\d+)?(-[a-z0-9.-]+)?$/.test(service.image!) }).toEqual({ name, pinned: true });
  }
  const published = services.flatMap(([name, s]) => (s.ports ?? []).map((port) => ({ name, port })));
  for (const { name, port } of published) expect({ name, port: port.startsWith('127.0.0.1:') }).toEqual({ name, port: true });
  // The README runs the service on the host against these two.
  expect(published.map((p) => p.port)).toEqual(expect.arrayContaining(['127.0.0.1:5432:5432', '127.0.0.1:6379:6379']));
  expect(/^ARG NODE_IMAGE=node:\d+\.\d+\.\d+-/m.test(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))).toBe(true);
});
