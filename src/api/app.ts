import express, { type Express } from 'express';
import helmet from 'helmet';
import type { AppServices } from '../app-services';
import { errors } from '../platform/errors';
import { mountRoutes } from './http/mount-routes';
import { parseQuery } from './http/query';
import type { RouteSpec } from './http/route';
import { accessLog } from './middleware/access-log';
import { errorHandler } from './middleware/error-handler';
import { clientAddress, requestId } from './middleware/request-context';
import { clientAddressResolver, compileTrust } from '../platform/client-address';
import { buildOpenApiDocument } from './openapi/openapi-document';
import { mountDocs } from './routes/docs.routes';
import { mountQueueDashboard } from './admin-dashboard/dashboard';
import { ROUTES } from './routes';

/** The HTTP tier: validates requests, persists them, enqueues work. It never runs a Worker. */
export function createApp(services: AppServices, routes: RouteSpec[] = ROUTES): Express {
  const app = express();
  app.disable('x-powered-by');
  // Only these hops may name the client in X-Forwarded-For; anything else could dodge the login throttle.
  const trust = compileTrust(services.config.trustProxy);
  app.set('trust proxy', trust);
  // node:querystring, as express's "simple" parser, but bytes that are not UTF-8 are refused (422), not replaced.
  app.set('query parser', parseQuery);

  app.use(requestId);
  // The OWASP REST header set on every answer: no sniffing, no framing, a CSP that lets a
  // JSON answer load nothing. HTML pages (/docs) set their own CSP on top of this.
  app.use(
    helmet({
      contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
      frameguard: { action: 'deny' },
    }),
  );
  app.use(clientAddress(clientAddressResolver(trust)));
  app.use(accessLog(services.logger, services.metrics));
  // inflate: false refuses gzip, deflate and br bodies with 415: no client of this API needs
  // them, and an encoded body is a decompression bomb or a malformed stream waiting to happen.
  app.use(
    express.json({
      limit: services.config.bodyLimitBytes,
      strict: true,
      inflate: false,
      type: ['application/json', 'application/*+json'],
    }),
  );

  mountDocs(app, buildOpenApiDocument(routes));
  mountQueueDashboard(app, services);
  mountRoutes(app, routes, services);

  app.use((_req, _res, next) => next(errors.notFound('Route')));
  app.use(errorHandler(services.logger));
  return app;
}
