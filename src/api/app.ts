import express, { type Express } from 'express';
import type { AppServices } from '../app-services';
import { errors } from '../platform/errors';
import { mountRoutes } from './http/mount-routes';
import { parseQuery } from './http/query';
import type { RouteSpec } from './http/route';
import { errorHandler } from './middleware/error-handler';
import { requestStack } from './middleware/request-stack';
import { clientAddressResolver, compileTrust } from '../platform/client-address';
import { buildOpenApiDocument } from './openapi/openapi-document';
import { mountDocs } from './routes/docs.routes';
import { mountQueueDashboard } from './admin-dashboard/dashboard';
import { ROUTES } from './routes';

/**
 * The HTTP tier: validates requests, persists them, enqueues work. It never runs a Worker.
 * `openApiText` is the served OpenAPI document when the caller has built it for this route
 * table already: building it from the zod schemas costs about a second of CPU.
 */
export function createApp(
  services: AppServices,
  routes: RouteSpec[] = ROUTES,
  openApiText: string = JSON.stringify(buildOpenApiDocument(routes)),
): Express {
  const app = express();
  app.disable('x-powered-by');
  // Only these hops may name the client in X-Forwarded-For; anything else could dodge the login throttle.
  const trust = compileTrust(services.config.trustProxy);
  app.set('trust proxy', trust);
  // node:querystring, as express's "simple" parser, but bytes that are not UTF-8 are refused (422), not replaced.
  app.set('query parser', parseQuery);

  app.use(
    requestStack({
      logger: services.logger,
      metrics: services.metrics,
      resolveClient: clientAddressResolver(trust),
      bodyLimitBytes: services.config.bodyLimitBytes,
    }),
  );

  // The route table first: it is the hot path, and a request for a path outside it costs one
  // Map lookup there (see mountRoutes). The docs (/docs, /openapi.json) and the dashboard
  // (/admin/...) share no leading segment with the table, so the order decides nothing else.
  mountRoutes(app, routes, services);
  mountDocs(app, openApiText);
  mountQueueDashboard(app, services);

  app.use((_req, _res, next) => next(errors.notFound('Route')));
  app.use(errorHandler(services.logger));
  return app;
}
