import { REQUEST_STACK_LAYERS } from '../src/api/middleware/request-stack';
import { CHILD_EXEC_ARGV, type Figure, type Harness } from './lib/harness';

/**
 * What the service's HTTP stack costs on its cheapest route, all answering the same bytes:
 * against a bare express 5 app (the framework the design card chose; aim at least 0.8) and
 * against bare node:http (the floor). Then the service's per-request middleware one layer at
 * a time on bare express (each figure: the app with layers 1..n against bare express), so the
 * note can say what each costs. BENCH_HEALTH_LAYERS=0 skips the layer figures.
 */
const CONNECTIONS = 32;

export async function run(h: Harness): Promise<Figure[]> {
  const [service, bareExpress, bareHttp] = await Promise.all([
    // Compiled as `npm start` runs it, with BENCH_CHILD_FLAGS (e.g. --cpu-prof) to profile it.
    h.start({ entry: 'servers/service.ts', execArgv: CHILD_EXEC_ARGV }),
    h.start({ entry: 'servers/express-layers.ts', name: 'bare-express' }),
    h.start({ entry: 'servers/bare-http.ts' }),
  ]);
  const figures = [
    await h.compare({
      name: 'GET /health rps, service vs bare express 5',
      candidate: { url: service.url('/health') },
      baseline: { url: bareExpress.url('/health') },
      connections: CONNECTIONS,
    }),
    await h.compare({
      name: 'GET /health rps, service vs bare node:http',
      candidate: { url: service.url('/health') },
      baseline: { url: bareHttp.url('/health') },
      connections: CONNECTIONS,
    }),
  ];
  if (process.env.BENCH_HEALTH_LAYERS === '0') return figures;
  for (let n = 1; n <= REQUEST_STACK_LAYERS.length; n++) {
    const layers = REQUEST_STACK_LAYERS.slice(0, n);
    const layered = await h.start({
      entry: 'servers/express-layers.ts',
      name: `express+${layers[n - 1]}`,
      env: { BENCH_LAYERS: layers.join(',') },
    });
    figures.push(
      await h.compare({
        name: `GET /health rps, bare express + ${layers.join(' + ')} vs bare express`,
        candidate: { url: layered.url('/health') },
        baseline: { url: bareExpress.url('/health') },
        connections: CONNECTIONS,
      }),
    );
    await layered.stop();
  }
  return figures;
}
