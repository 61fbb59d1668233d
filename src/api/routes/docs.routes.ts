import express, { type Express } from 'express';
import helmet from 'helmet';
import { getAbsoluteFSPath } from 'swagger-ui-dist';

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

export function mountDocs(app: Express, document: unknown): void {
  const body = JSON.stringify(document);
  app.use('/docs', DOCS_CSP);
  app.get('/openapi.json', (req, res) => {
    req.routeTemplate = '/openapi.json';
    res.type('application/json').send(body);
  });
  app.use('/docs/assets', express.static(getAbsoluteFSPath(), { index: false, maxAge: '1h' }));
  app.get('/docs/init.js', (_req, res) => {
    res.type('application/javascript').send(DOCS_INIT);
  });
  app.get('/docs', (req, res) => {
    req.routeTemplate = '/docs';
    res.type('html').send(DOCS_PAGE);
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
