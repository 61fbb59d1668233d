import express, { type Express } from 'express';
import { getAbsoluteFSPath } from 'swagger-ui-dist';

/** Swagger UI, served from the swagger-ui-dist package (no CDN), reading /openapi.json. */
export function mountDocs(app: Express, document: unknown): void {
  const body = JSON.stringify(document);
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
