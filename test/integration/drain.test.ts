import { z } from 'zod';
import { defineRoute, json, type RouteSpec } from '../../src/api/http/route';
import { ROUTES } from '../../src/api/routes';
import { startTestApp, waitFor } from '../helpers/test-app';

/** The slow request tells the test when it has started, and finishes when the test says so. */
let started: () => void;
const requestStarted = new Promise<void>((resolve) => (started = resolve));
let finish: () => void;
const mayFinish = new Promise<void>((resolve) => (finish = resolve));

const slowRoute: RouteSpec = defineRoute({
  method: 'get',
  path: '/slow',
  operationId: 'getSlow',
  summary: 'answers when the test lets it',
  tags: ['test'],
  access: { kind: 'public' },
  responses: { 200: { description: 'ok', schema: z.object({ done: z.boolean() }) } },
  handler: async () => {
    started();
    await mayFinish;
    return json(200, { done: true });
  },
});

describe('graceful shutdown of the HTTP tier', () => {
  test('when stop is called during a request, then the request completes and new connections are refused', async () => {
    const app = await startTestApp({ label: 'drain', routes: [...ROUTES, slowRoute] });
    const inFlight = app.request('GET', '/slow');
    await requestStarted;
    const stopping = app.stop();

    // New connections are refused while the request is still running...
    await waitFor('the listener to close', () =>
      fetch(`${app.baseUrl}/health`).then(
        () => false,
        () => true,
      ),
    );
    // ...and the request in flight still completes.
    finish();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ done: true });
    await stopping;
  });
});
