import type { Figure, Harness } from './lib/harness';

/** What the framework, middleware and metrics cost on the cheapest route, against the floor node:http sets. */
export async function run(h: Harness): Promise<Figure[]> {
  const [service, bare] = await Promise.all([
    h.start({ entry: 'servers/service.ts' }),
    h.start({ entry: 'servers/bare-http.ts' }),
  ]);
  return [
    await h.compare({
      name: 'GET /health rps, service vs bare node:http',
      candidate: { url: service.url('/health') },
      baseline: { url: bare.url('/health') },
      connections: 32,
    }),
  ];
}
