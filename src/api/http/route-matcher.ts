import type { RouteSpec } from './route';

/**
 * Finds the route of the table a request is for, with the rules express 5's router applied
 * to this table before (router 2 with path-to-regexp 8, express's defaults): literal segments
 * match case-insensitively, a `{param}` is one non-empty segment, one trailing slash is
 * allowed, the first matching route in table order wins, HEAD is served by the GET route,
 * and a parameter is percent-decoded, a parameter that does not decode being a 400.
 *
 * Hot path: every request of the table goes through here instead of express's router, which
 * paid a router hand-off, a layer walk and a regular expression per route tried, and a second
 * router per leading segment; here a request costs one Map lookup and a segment compare per
 * route of its group. The table's paths are all of this simple form (checked at start-up:
 * `compileRoutes` refuses anything else), so nothing express could match is lost.
 */
export interface RouteMatch {
  route: RouteSpec;
  params: Record<string, string>;
}

interface CompiledRoute {
  route: RouteSpec;
  method: string;
  /** Lower-case literal text, or the name of a parameter. */
  segments: Array<{ literal: string } | { param: string }>;
}

export class RouteMatcher {
  private readonly groups = new Map<string, CompiledRoute[]>();

  constructor(routes: RouteSpec[]) {
    for (const route of routes) {
      const key = groupOfRoute(route.path);
      let group = this.groups.get(key);
      if (!group) this.groups.set(key, (group = []));
      group.push({ route, method: route.method.toUpperCase(), segments: compileSegments(route.path) });
    }
  }

  /** The route `method path` is for, or undefined (the request goes on to the not-found answer). */
  match(method: string, path: string): RouteMatch | undefined {
    const group = this.groups.get(groupOfPath(path));
    if (!group) return undefined;
    const wanted = method === 'HEAD' ? 'GET' : method;
    // One trailing slash is allowed (express's non-strict routing); the leading one is skipped.
    const end = path.length > 1 && path.charCodeAt(path.length - 1) === SLASH ? path.length - 1 : path.length;
    const parts = path.slice(1, end).split('/');
    for (let i = 0; i < group.length; i++) {
      const candidate = group[i]!;
      if (candidate.segments.length !== parts.length) continue;
      // As express: a route whose path fits decodes its parameters before its method is
      // looked at, so a bad escape is a 400 even on a method the path does not serve.
      const params = matchSegments(candidate.segments, parts);
      if (params && candidate.method === wanted) return { route: candidate.route, params };
    }
    return undefined;
  }
}

const SLASH = 47;

function matchSegments(segments: CompiledRoute['segments'], parts: string[]): Record<string, string> | undefined {
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const part = parts[i]!;
    if (part === '') return undefined;
    if ('literal' in segment && (part.length !== segment.literal.length || part.toLowerCase() !== segment.literal))
      return undefined;
  }
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if ('param' in segment) params[segment.param] = decodeParam(parts[i]!);
  }
  return params;
}

/** As express's router decodes a parameter: a malformed escape is the client's error (400), not a 500. */
function decodeParam(raw: string): string {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch (err) {
    if (!(err instanceof URIError)) throw err;
    throw Object.assign(new URIError('Failed to decode a path parameter'), { status: 400, expose: true });
  }
}

const PARAM = /^\{([A-Za-z0-9_]+)\}$/;
const LITERAL = /^[A-Za-z0-9._~-]+$/;

function compileSegments(path: string): CompiledRoute['segments'] {
  if (!path.startsWith('/') || path.length < 2 || path.endsWith('/'))
    throw new Error(`Route ${path}: a path starts with / and does not end with one`);
  return path
    .slice(1)
    .split('/')
    .map((segment) => {
      const param = PARAM.exec(segment);
      if (param) return { param: param[1]! };
      if (!LITERAL.test(segment)) throw new Error(`Route ${path}: segment "${segment}" is neither literal text nor a {param}`);
      return { literal: segment.toLowerCase() };
    });
}

/** `/api/admin/settings` is in group `api/admin`, `/orders/{ticket}` in `orders`. */
function groupOfRoute(path: string): string {
  const key = groupOfPath(path);
  if (key === '' || key.includes('{'))
    throw new Error(`Route ${path}: its leading path segments (two under /api) must be literal`);
  return key;
}

/** The same key for a request's path; lower case, as routes match case-insensitively. */
function groupOfPath(path: string): string {
  const first = path.indexOf('/', 1);
  const head = first === -1 ? path.slice(1) : path.slice(1, first);
  if (first === -1 || head.toLowerCase() !== 'api') return head.toLowerCase();
  const second = path.indexOf('/', first + 1);
  return `api/${(second === -1 ? path.slice(first + 1) : path.slice(first + 1, second)).toLowerCase()}`;
}
