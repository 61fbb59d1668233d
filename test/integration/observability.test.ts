import { buildOpenApiDocument } from '../../src/api/openapi/openapi-document';
import { ROUTES } from '../../src/api/routes';
import { startTestApp, type TestApp } from '../helpers/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ label: 'observability', env: { ROLE: 'api' } });
});
afterAll(() => app?.stop());

describe('observability and documentation', () => {
  test('when /health is asked, then it answers without touching dependencies', async () => {
    const res = await app.request('GET', '/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  test('when /openapi.json is asked, then every route of the route table is documented', async () => {
    const res = await app.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.info.version).toBe('1.0.0');
    for (const route of ROUTES) {
      expect(res.body.paths[route.path]?.[route.method]).toMatchObject({ operationId: route.operationId });
    }
    // Test apps serve the text built once per run: it is the document this code builds.
    expect(res.body).toEqual(buildOpenApiDocument(ROUTES));
    expect(res.body.components.securitySchemes.accessToken).toMatchObject({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
  });

  test('when /docs is asked, then a page rendering the document is served with its assets', async () => {
    const page = await app.request('GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.text).toContain('swagger-ui');
    const asset = await fetch(`${app.baseUrl}/docs/assets/swagger-ui-bundle.js`);
    expect(asset.status).toBe(200);
    const init = await app.request('GET', '/docs/init.js');
    expect(init.text).toContain('/openapi.json');
  });

  test('when requests were served, then /metrics has a latency histogram labelled by route template', async () => {
    await app.request('GET', '/health');
    await app.request('GET', '/no/such/thing/123');
    const res = await app.request('GET', '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(res.text).toMatch(
      /^http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/health",status="200"\} \d+/m,
    );
    // Unknown paths share one label, so a scanner cannot create unbounded series.
    expect(res.text).toContain('route="unmatched",status="404"');
    expect(res.text).not.toContain('/no/such/thing');
    expect(res.text).toMatch(/^queue_jobs\{queue="mail",state="waiting"\} 0/m);
  });
});
