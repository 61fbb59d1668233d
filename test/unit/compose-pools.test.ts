import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/config';
import { ALL_QUEUES } from '../../src/jobs/queues';

/**
 * docker-compose.yml runs one worker service per pool. Docker has no
 * engine here, so this reads the file as Compose would (YAML merge keys resolved) and checks
 * what a running stack depends on: every pool starts with a valid configuration, and every
 * queue of src/jobs is served by exactly one pool (a queue no pool serves would wait forever).
 */
type Service = { environment?: Record<string, string>; build?: unknown; ports?: unknown; container_name?: unknown };
const compose = parse(readFileSync(join(__dirname, '../../docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const pools = Object.entries(compose.services).filter(([, s]) => s.environment?.ROLE === 'worker');

test('when docker-compose is read, then it has a worker service per pool, each scalable', () => {
  expect(pools.length).toBeGreaterThanOrEqual(3);
  for (const [name, service] of pools) {
    // --scale needs no fixed name and no published port.
    expect({ name, container_name: service.container_name, ports: service.ports, built: !!service.build }).toEqual({
      name,
      container_name: undefined,
      ports: undefined,
      built: true,
    });
  }
});

/** Compose's `${NAME:-default}` with nothing set in the shell: the default. */
const interpolated = (env: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(env).map(([k, v]) => [k, v.replace(/\$\{[A-Z_]+(?::-([^}]*))?\}/g, (_, fallback = '') => fallback)]),
  );

test('when each pool starts, then its configuration loads and names its own queues', () => {
  for (const [name, service] of pools) {
    const config = loadConfig({ ...interpolated(service.environment!), NODE_ENV: 'development' });
    expect({ name, queues: config.workerQueues.map((q) => q.queue) }).toEqual({
      name,
      queues: service.environment!.WORKER_QUEUES!.split(','),
    });
  }
});

test('when the pools are taken together, then every queue is served by exactly one', () => {
  const servedBy = new Map<string, string[]>();
  for (const [name, service] of pools)
    for (const queue of service.environment!.WORKER_QUEUES!.split(','))
      servedBy.set(queue, [...(servedBy.get(queue) ?? []), name]);
  expect(Object.fromEntries(ALL_QUEUES.map((q) => [q, servedBy.get(q)?.length ?? 0]))).toEqual(
    Object.fromEntries(ALL_QUEUES.map((q) => [q, 1])),
  );
});
