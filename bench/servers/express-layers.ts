import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import express from 'express';
import { parseQuery } from '../../src/api/http/query';
import {
  REQUEST_STACK_LAYERS,
  composeLayers,
  requestStackLayer,
  type RequestStackLayer,
} from '../../src/api/middleware/request-stack';
import { clientAddressResolver, compileTrust } from '../../src/platform/client-address';
import { createLogger } from '../../src/platform/logger';
import { Metrics } from '../../src/platform/metrics';
import { listenAndAnnounce } from './announce';
import { benchConfig } from './bench-config';
import { SECURITY_HEADERS } from './health-bytes';

/**
 * A bare express 5 app answering GET /health with the service's bytes, plus the service's own
 * per-request middleware named in BENCH_LAYERS (comma-separated, in the service's order;
 * empty for none). With none it is the framework's floor; adding one layer at a time
 * measures what each costs. Headers a missing layer would have set are written by the handler,
 * so every variant sends the same bytes.
 */
const wanted = (process.env.BENCH_LAYERS ?? '').split(',').filter(Boolean);
const unknown = wanted.filter((l) => !(REQUEST_STACK_LAYERS as readonly string[]).includes(l));
if (unknown.length)
  throw new Error(`BENCH_LAYERS: unknown layer ${unknown.join(', ')} (there are ${REQUEST_STACK_LAYERS.join(', ')})`);
const layers = REQUEST_STACK_LAYERS.filter((l) => wanted.includes(l)) as RequestStackLayer[];

const config = benchConfig('api');
const trust = compileTrust(config.trustProxy);
const app = express();
app.disable('x-powered-by');
app.set('trust proxy', trust);
app.set('query parser', parseQuery);
const parts = {
  logger: createLogger(config.logLevel),
  metrics: new Metrics({ defaultMetrics: true }),
  resolveClient: clientAddressResolver(trust),
  bodyLimitBytes: config.bodyLimitBytes,
};
// Composed as the service composes them (requestStack), so each figure is what the layers cost there.
if (layers.length > 0) app.use(composeLayers(layers.map((layer) => requestStackLayer(layer, parts))));

const setsRequestId = layers.includes('request-id');
const setsSecurityHeaders = layers.includes('security-headers');
app.get('/health', (_req, res) => {
  if (!setsRequestId) res.setHeader('X-Request-Id', randomUUID());
  if (!setsSecurityHeaders) res.set(SECURITY_HEADERS);
  res.json({ status: 'ok' });
});

listenAndAnnounce(createServer(app));
