import { z } from 'zod';
import { replicaHealth } from '../../db/read-replica';
import { errors } from '../../platform/errors';
import { METRICS_REFUSED, metricsAllowed } from '../../platform/metrics-access';
import { withTimeout } from '../../platform/with-timeout';
import { defineRoute, json, type RouteSpec } from '../http/route';

const PROBE_TIMEOUT_MS = 1000;

const ReplicaHealthSchema = z
  .object({
    state: z
      .enum(['streaming', 'lagging', 'down', 'unknown'])
      .describe(
        'streaming: within REPLICA_MAX_LAG_MS, heavy reads go to it; lagging: further behind, they go to the primary; ' +
          'down: it did not answer the last probe; unknown: not probed yet',
      ),
    lag_ms: z.int().nullable().describe('How far it was behind the primary at the last probe; null when it did not answer'),
    checked_at: z.iso.datetime().nullable().describe('When this process last probed it'),
  })
  .meta({ id: 'ReplicaHealth' });
const HealthSchema = z
  .object({
    status: z.literal('ok'),
    replica: ReplicaHealthSchema.optional().describe('Present when the deployment sets DATABASE_REPLICA_URL'),
  })
  .meta({ id: 'Health' });
const ReadySchema = z
  .object({
    status: z.enum(['ready', 'unavailable']),
    checks: z.object({ postgres: z.enum(['ok', 'down']), redis: z.enum(['ok', 'down']) }),
  })
  .meta({ id: 'Readiness' });

export const systemRoutes: RouteSpec[] = [
  defineRoute({
    method: 'get',
    path: '/health',
    operationId: 'getHealth',
    summary: 'Liveness: the process is up',
    description:
      'Always 200 while the process runs. With a read replica configured, `replica` says how this process last saw it; ' +
      'a replica that is down or behind sends heavy reads to the primary and does not make the process unhealthy.',
    tags: ['observability'],
    access: { kind: 'public' },
    responses: { 200: { description: 'Alive', schema: HealthSchema } },
    handler: ({ services }) => json(200, { status: 'ok' as const, ...replicaHealth(services.replica) }),
  }),
  defineRoute({
    method: 'get',
    path: '/ready',
    operationId: 'getReadiness',
    summary: 'Readiness: Postgres and Redis answer',
    description: 'Answers 503 while either cannot be reached, so a load balancer stops sending traffic.',
    tags: ['observability'],
    access: { kind: 'public' },
    responses: {
      200: { description: 'Ready', schema: ReadySchema },
      503: { description: 'Postgres or Redis unreachable', schema: ReadySchema },
    },
    handler: async ({ em, services }) => {
      const [postgres, redis] = await Promise.all([
        probe(() => em.getConnection().execute('select 1')),
        probe(() => services.redis.ping()),
      ]);
      const ok = postgres && redis;
      return json(ok ? 200 : 503, {
        status: ok ? 'ready' : 'unavailable',
        checks: { postgres: postgres ? 'ok' : 'down', redis: redis ? 'ok' : 'down' },
      });
    },
  }),
  defineRoute({
    method: 'get',
    path: '/metrics',
    operationId: 'getMetrics',
    summary: 'Prometheus metrics',
    description:
      'HTTP latency histogram by route, queue depth by state and job outcomes per queue, the outbox relay lag (outbox_oldest_unpublished_seconds), process metrics. ' +
      'When the deployment sets METRICS_TOKEN, the request must bear it as a Bearer token (401 otherwise). In production ' +
      'without METRICS_TOKEN it is 401 to everyone, unless the deployment sets METRICS_PUBLIC=true.',
    tags: ['observability'],
    access: { kind: 'public' },
    raw: true,
    responses: {
      200: { description: 'Prometheus text exposition format' },
      401: { description: 'METRICS_TOKEN is set and the request does not bear it, or production leaves /metrics closed' },
    },
    handler: async ({ services, req, res }) => {
      if (!metricsAllowed(req.headers.authorization, services.config.metricsToken, services.config.metricsPublic))
        throw errors.unauthenticated(METRICS_REFUSED);
      const body = await services.metrics.registry.metrics();
      res.type(services.metrics.registry.contentType).send(body);
      return undefined;
    },
  }),
];

async function probe(check: () => Promise<unknown>): Promise<boolean> {
  try {
    await withTimeout(check(), PROBE_TIMEOUT_MS);
    return true;
  } catch {
    return false;
  }
}
