import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { RouteMatcher } from '../../src/api/http/route-matcher';
import type { RouteSpec } from '../../src/api/http/route';
import { ROUTES } from '../../src/api/routes';

/**
 * The route table used to be matched by express's router; RouteMatcher replaced it on the hot
 * path and must find the same route with the same parameters for every request. This test
 * asks both: an express 5 app with the real table mounted as before (one route each, in table
 * order, `{param}` as `:param`) and the matcher, for a few hundred paths made from the table.
 */
type Outcome = { status: number; route?: string; params?: Record<string, string> };

let server: Server;
let base: string;

beforeAll(async () => {
  const app = express();
  for (const route of ROUTES) {
    app[route.method](route.path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1'), (req: Request, res: Response) => {
      res.json({ route: route.path, params: { ...req.params } });
    });
  }
  app.use((_req: Request, res: Response) => void res.status(404).json({}));
  app.use((err: { status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    res.status(err.status ?? 500).json({});
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

async function viaExpress(method: string, path: string): Promise<Outcome> {
  const res = await fetch(base + path, { method });
  if (res.status !== 200) return { status: res.status };
  if (method === 'HEAD') return { status: 200 };
  const body = (await res.json()) as { route: string; params: Record<string, string> };
  return { status: 200, ...body };
}

const matcher = new RouteMatcher(ROUTES);

function viaMatcher(method: string, path: string): Outcome {
  try {
    const found = matcher.match(method, path);
    if (!found) return { status: 404 };
    return method === 'HEAD' ? { status: 200 } : { status: 200, route: found.route.path, params: found.params };
  } catch (err) {
    return { status: (err as { status?: number }).status ?? 500 };
  }
}

/** Paths a client could send for one route: as written, in other cases, with odd slashes and escapes. */
function pathsFor(route: RouteSpec): string[] {
  const fill = (value: string) => route.path.replace(/\{[A-Za-z0-9_]+\}/g, value);
  const plain = fill('abc-1');
  return [
    plain,
    plain.toUpperCase(),
    `${plain}/`,
    `${plain}//`,
    `/${plain}`,
    plain.replace(/\/[^/]+$/, ''),
    `${plain}/extra`,
    fill('caf%C3%A9'),
    fill('a%2Fb'),
    fill('%E0%A4%A'),
    fill('%'),
    fill(''),
    fill('12345678901234567890'),
  ];
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'];

test('for every path made from the route table and every method, the matcher finds what express found', async () => {
  const paths = [...new Set([...ROUTES.flatMap(pathsFor), '/', '/api', '/api/', '/nope', '/docs', '/HEALTH'])];
  const differences: string[] = [];
  for (const path of paths) {
    for (const method of METHODS) {
      const [expected, actual] = [await viaExpress(method, path), viaMatcher(method, path)];
      try {
        expect(actual).toEqual(expected);
      } catch {
        differences.push(`${method} ${path}: express ${JSON.stringify(expected)}, matcher ${JSON.stringify(actual)}`);
      }
    }
  }
  expect(differences).toEqual([]);
  // The comparison means something only if both sides matched and refused a fair share.
  expect(paths.length).toBeGreaterThan(500);
});

test('a path the matcher cannot represent is refused when the table is built, not matched wrongly later', () => {
  const route = ROUTES[0]!;
  for (const path of ['/orders/:ticket', '/orders/{ticket}/', 'orders', '/orders/t{ticket}', '/{group}/x']) {
    expect(() => new RouteMatcher([{ ...route, path }])).toThrow(/Route/);
  }
});
