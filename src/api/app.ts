import express, { type Express } from 'express';
import type { AppServices } from '../platform/services';
import { errors } from '../platform/errors';
import { mountRoutes } from './http/mount-routes';
import type { RouteSpec } from './http/route';
import { accessLog } from './middleware/access-log';
import { errorHandler } from './middleware/error-handler';
import { requestId } from './middleware/request-context';
import { buildOpenApiDocument } from './openapi/openapi-document';
import { mountDocs } from './routes/docs.routes';
import { ROUTES } from './routes';

export const API_VERSION = '1.0.0';

/** The HTTP tier: validates requests, persists them, enqueues work. It never runs a Worker. */
export function createApp(services: AppServices, routes: RouteSpec[] = ROUTES): Express {
  const app = express();
  app.disable('x-powered-by');
  // Only these hops may name the client in X-Forwarded-For; anything else could dodge the login throttle.
  app.set('trust proxy', services.config.trustProxy);
  app.set('query parser', 'simple');

  app.use(requestId);
  app.use(accessLog(services.logger, services.metrics));
  app.use(
    express.json({ limit: services.config.bodyLimitBytes, strict: true, type: ['application/json', 'application/*+json'] }),
  );

  mountDocs(
    app,
    buildOpenApiDocument(routes, {
      title: 'Trading Infrastructure API',
      version: API_VERSION,
      description: 'Back-office API of a forex/CFD broker for staff, customers and integrators.',
    }),
  );
  mountRoutes(app, routes, services);

  app.use((_req, _res, next) => next(errors.notFound('Route')));
  app.use(errorHandler(services.logger));
  return app;
}
