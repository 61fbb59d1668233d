import { defineRoute, json, type RouteSpec } from '../../src/api/http/route';
import { ROUTES } from '../../src/api/routes';
import { startTestApp } from '../helpers/test-app';

const slowRoute: RouteSpec = defineRoute({
  method: 'get',
  path: '/slow',
  operationId: 'slow',
  summary: 'answers after 700 ms',
  tags: ['test'],
  access: { kind: 'public' },
  responses: { 200: { description: 'ok' } },
  handler: async () => {
    await new Promise((r) => setTimeout(r, 700));
    return json(200, { done: true });
  },
});

describe('graceful shutdown of the HTTP tier', () => {
  test('when stop is called during a request, then the request completes and new connections are refused', async () => {
    const app = await startTestApp({ label: 'drain', routes: [...ROUTES, slowRoute] });
    const inFlight = app.request('GET', '/slow');
    await new Promise((r) => setTimeout(r, 100));
    const stopping = app.stop();
    await new Promise((r) => setTimeout(r, 100));

    await expect(fetch(`${app.baseUrl}/health`)).rejects.toThrow();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ done: true });
    await stopping;
  });
});
