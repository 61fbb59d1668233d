import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { EntityManager } from '@mikro-orm/postgresql';
import pino from 'pino';
import { startBulkClose } from '../../../src/domain/orders/bulk-close';
import { JobProducer } from '../../../src/jobs/job-producer';
import { createRedis, redisReady, type RedisClient } from '../../../src/platform/redis';
import { adminToken, createCustomer } from '../../helpers/identity';
import { REDIS_CLUSTER, startTestApp, type TestApp } from '../../helpers/test-app';
import { fundedAccount, openOrder, setUpMarket } from '../../helpers/trading';
import { completedBulkClose } from './trading-kit';

/**
 * A bulk close whose enqueue times out because Redis's answer was lost, while the flow was
 * added: a TCP proxy between the producer and Redis forwards the commands and swallows every
 * reply on the connection it has when armed (a fresh connection is served normally). The run
 * must settle from the jobs that landed (every ticket closed), not be marked failed.
 */
jest.setTimeout(120_000);

let app: TestApp;
let proxy: Server;
let producer: JobProducer;
let connection: RedisClient;
const sockets = new Set<Socket>();
/** Client sockets whose replies are swallowed. */
const swallowing = new Set<Socket>();

// One proxy fronts one Redis: behind a Redis Cluster the client follows MOVED redirections to
// nodes the proxy does not front, so this runs against a single Redis (scripts/cluster-check.sh
// runs the rest of the trading tests through the cluster).
const suite = REDIS_CLUSTER ? describe.skip : describe;

suite('a bulk close whose enqueue reply is lost', () => {
  beforeAll(async () => {
    app = await startTestApp({ label: 'bulk-lost-reply' });
    const upstream = new URL(app.config.redis.url);
    proxy = createServer((client) => {
      sockets.add(client);
      const server = connect(Number(upstream.port || 6379), upstream.hostname);
      sockets.add(server);
      client.on('data', (d) => server.write(d));
      server.on('data', (d) => {
        if (!swallowing.has(client)) client.write(d);
      });
      const end = () => {
        client.destroy();
        server.destroy();
      };
      client.on('close', end).on('error', end);
      server.on('close', end).on('error', end);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const { port } = proxy.address() as AddressInfo;
    connection = createRedis({ url: `redis://127.0.0.1:${port}`, cluster: false }, 'producer', pino({ level: 'silent' }));
    expect(await redisReady(connection, 5000)).toBe(true);
    producer = new JobProducer(connection, app.config.queuePrefix);
  });
  afterAll(async () => {
    connection?.disconnect();
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
    await app?.stop();
  });

  test('when the answer to a bulk close enqueue is lost but the flow landed, then the run settles from the jobs: every ticket closes, none is failed', async () => {
    const token = await adminToken(app);
    const market = await setUpMarket(app, token);
    const customer = await createCustomer(app, token);
    const login = await fundedAccount(app, token, customer.id, market.groupId, 100_000);
    const tickets: number[] = [];
    for (let i = 0; i < 3; i++) tickets.push(await openOrder(app, token, login, i % 2 === 0 ? 0 : 1, 0.01));

    // A first bulk close through the proxy, answered: the connection has then checked the flow's
    // scripts, so the armed one sends its add at once (the reply lost is the add's own).
    const warm = await fundedAccount(app, token, customer.id, market.groupId, 100_000);
    await openOrder(app, token, warm, 0, 0.01);
    const first = await startBulkClose(app.runtime.services.orm.em.fork() as EntityManager, producer, {
      login: warm,
      comment: 'warm up',
      requestedBy: null,
    });
    expect(first.job).toBeDefined();

    // Every reply on the producer's current connection is swallowed from here on.
    for (const s of sockets) swallowing.add(s);
    const started = Date.now();
    const { runId, job } = await startBulkClose(app.runtime.services.orm.em.fork() as EntityManager, producer, {
      login,
      comment: 'lost reply',
      requestedBy: null,
    });
    // It waited out the enqueue's timeout, then found the flow by its id: running, not failed.
    expect(Date.now() - started).toBeGreaterThanOrEqual(9_000);
    expect(job).toBeUndefined();

    const result = await completedBulkClose(app, token, runId, 60_000);
    expect(result.failed).toEqual([]);
    expect([...result.closed].sort((a: number, b: number) => a - b)).toEqual(tickets);
  });
});
