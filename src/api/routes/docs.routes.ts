import express, { type Express } from 'express';
import helmet from 'helmet';
import { getAbsoluteFSPath } from 'swagger-ui-dist';
import { defineRoute, type RouteSpec } from '../http/route';

/** Swagger UI, served from the swagger-ui-dist package (no CDN), reading /openapi.json. */
/**
 * Swagger UI loads its script and styles from /docs/assets and sets inline styles on its
 * elements; it renders icons from data: URIs and calls the API it documents (same origin).
 * Nothing else may load, and no page may frame it.
 */
const DOCS_CSP = helmet.contentSecurityPolicy({
  useDefaults: false,
  directives: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'", "'unsafe-inline'"],
    imgSrc: ["'self'", 'data:'],
    connectSrc: ["'self'"],
    objectSrc: ["'none'"],
    baseUri: ["'self'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
});

/** Where createApp keeps the document it built from the table it mounts (see mountDocs). */
const DOCUMENT = 'openApiDocument';

/**
 * The document's own paths, in the route table so the document lists them (a client or a
 * crawler finds the description where the API says it is) and they get the table's matching,
 * access and logging. Their bodies are not JSON the contract checks: raw routes.
 */
export const docsRoutes: RouteSpec[] = [
  defineRoute({
    method: 'get',
    path: '/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This OpenAPI 3.1 document',
    description: 'Generated from the route table and its zod schemas; the same file `npm run openapi` writes.',
    tags: ['documentation'],
    access: { kind: 'public' },
    raw: true,
    responses: { 200: { description: 'The OpenAPI 3.1 document (application/json)' } },
    handler: ({ req, res }) => {
      res.type('application/json').send(req.app.locals[DOCUMENT] as string);
      return undefined;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/docs',
    operationId: 'getApiDocsPage',
    summary: 'Swagger UI rendering this document',
    tags: ['documentation'],
    access: { kind: 'public' },
    raw: true,
    responses: { 200: { description: 'An HTML page (text/html); its script and styles load from /docs/assets' } },
    handler: ({ req, res }) => {
      // The page's own CSP replaces the API's load-nothing one (helmet sets it synchronously).
      DOCS_CSP(req, res, () => undefined);
      res.type('html').send(DOCS_PAGE);
      return undefined;
    },
  }),
];

/** The document docsRoutes serve, and the static parts of the docs page (outside the table). */
export function mountDocs(app: Express, documentText: string): void {
  app.locals[DOCUMENT] = documentText;
  app.use('/docs', DOCS_CSP);
  app.use('/docs/assets', express.static(getAbsoluteFSPath(), { index: false, maxAge: '1h' }));
  app.get('/docs/init.js', (_req, res) => {
    res.type('application/javascript').send(DOCS_INIT);
  });
}

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Trading Infrastructure API</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>`;

const DOCS_INIT = `window.onload = function () {
  window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true });
};`;
