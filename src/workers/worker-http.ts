import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AppServices } from '../app-services';
import { replicaHealth } from '../db/read-replica';
import { METRICS_REFUSED, metricsAllowed } from '../platform/metrics-access';
import { StartupRefused } from '../startup-refused';

/**
 * A worker process answers `GET /health` and `GET /metrics` on WORKER_HTTP_PORT, so an orchestrator can check it and Prometheus can scrape its process metrics.
 * Two fixed answers need no router, body parser or auth stack: node:http alone, with the
 * API's error bodies (docs/api-guide.md, Errors).
 */
export function startWorkerHttp(services: AppServices, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    answer(services, req, res).catch((err: unknown) => {
      services.logger.error({ err }, 'worker http answer failed');
      if (!res.headersSent) sendJson(res, 500, { detail: 'Internal error', code: 'INTERNAL' });
      else res.destroy();
    });
  });
  // Slow clients may not hold a socket open forever.
  server.headersTimeout = 15_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new StartupRefused(
              `WORKER_HTTP_PORT: ${host}:${port} is already in use (another worker on this machine?); give each worker process its own port, or 0 for any free one`,
            )
          : err,
      ),
    );
    server.listen(port, host, () => resolve(server));
  });
}

async function answer(services: AppServices, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (path !== '/health' && path !== '/metrics') return sendJson(res, 404, { detail: 'Not found', code: 'NOT_FOUND' });
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    return sendJson(res, 405, { detail: 'Method not allowed', code: 'METHOD_NOT_ALLOWED' });
  }
  if (path === '/health') return sendJson(res, 200, { status: 'ok', ...replicaHealth(services.replica) });
  if (!metricsAllowed(req.headers.authorization, services.config.metricsToken, services.config.metricsPublic)) {
    res.setHeader('WWW-Authenticate', 'Bearer');
    return sendJson(res, 401, { detail: METRICS_REFUSED, code: 'UNAUTHENTICATED' });
  }
  const body = await services.metrics.registry.metrics();
  res.writeHead(200, { 'Content-Type': services.metrics.registry.contentType, 'Cache-Control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : body);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
  res.end(text);
}
