import type { EntityManager } from '@mikro-orm/postgresql';
import type { Express, NextFunction, Request, Response } from 'express';
import type { z } from 'zod';
import { AppError, ValidationFailure, type Location, type ValidationItem } from '../../platform/errors';
import type { AppServices } from '../../app-services';
import { unsafeInput } from '../validation/safe-input';
import { zodIssuesToItems } from '../validation/zod-issues';
import { abandonIdempotent, beginIdempotent, completeIdempotent, requestHash } from '../../domain/idempotency/idempotency';
import type { Caller } from '../../platform/caller';
import { authorize, checkRouteFamilies } from './access';
import { replyProblems } from './response-contract';
import type { HandlerResult, RouteSpec } from './route';
import { RouteMatcher } from './route-matcher';
import { jsonSender } from './send-json';
import { maintenanceError, maintenanceState } from '../../domain/identity/maintenance';

/**
 * Registers the route table on the app. Every route gets the same pipeline: record its
 * template, validate path, query and body with its zod schemas (all three reported at
 * once), run the handler (with a unit of work of its own, made when first used), check the reply against the route's
 * declared responses (tests only), write the reply.
 */
export function mountRoutes(app: Express, routes: RouteSpec[], services: AppServices): void {
  checkRouteFamilies(routes);
  // Under test every answer is held to its contract, so every integration test also tests
  // the contract; elsewhere this costs nothing.
  const pipe: Pipeline = { services, checkReplies: services.config.env === 'test', sendJson: jsonSender(app) };
  // Hot path: the table is matched by RouteMatcher (express's matching rules, without a router
  // hand-off per group and a regular expression per route tried; see route-matcher.ts).
  const matcher = new RouteMatcher(routes);
  app.use((req: Request, res: Response, next: NextFunction) => {
    // No route declares OPTIONS: it goes on to the not-found answer, as it always has.
    if (req.method === 'OPTIONS') {
      next();
      return;
    }
    const found = matcher.match(req.method, req.path);
    if (!found) {
      next();
      return;
    }
    req.params = found.params;
    req.routeTemplate = found.route.path;
    // A synchronous throw (a path parameter that does not decode, a validation failure) is
    // caught by express around this middleware and reaches the error handler like a rejection.
    handle(found.route, req, res, pipe)?.catch(next);
  });
}

/** What every request's pipeline shares: built once when the table is mounted. */
interface Pipeline {
  services: AppServices;
  checkReplies: boolean;
  sendJson: ReturnType<typeof jsonSender>;
}

/**
 * Hot path, written to stay synchronous as far as it can: a public route with no idempotency
 * key and a handler that answers at once (GET /health) makes no promise and no async hop at
 * all; each await costs a microtask turn and a promise on every request of every route. The
 * steps and their order are the same on every path: access, input, idempotency, handler, reply.
 * Returns a promise only when some step is asynchronous.
 */
function handle(route: RouteSpec, req: Request, res: Response, pipe: Pipeline): Promise<void> | undefined {
  // Nothing a token unlocks may sit in a shared or browser cache, refusals included.
  if (route.access.kind !== 'public' || req.headers.authorization !== undefined) res.setHeader('Cache-Control', 'no-store');
  // Hot path: forking a unit of work costs more than everything else a light request does, so
  // the request's fork is made when something first asks for it, and routes that never touch
  // the database (health, public reads from Redis) skip it. Everything uses this one fork.
  const unit = new UnitOfWork(pipe.services);
  if (route.access.kind === 'public') {
    if (!MAINTAINED_PUBLIC.test(route.path)) return validated(route, req, res, pipe, unit, undefined);
    return refuseInMaintenance(unit).then(() => validated(route, req, res, pipe, unit, undefined));
  }
  // Who asks comes before what they sent: a stranger learns nothing about a route's schema.
  return authorize(route.access, req, unit.em, pipe.services.identity, route.acceptsTicket).then((caller) =>
    caller?.kind === 'customer' && route.method !== 'get' && !route.path.startsWith('/auth/')
      ? refuseInMaintenance(unit).then(() => validated(route, req, res, pipe, unit, caller))
      : validated(route, req, res, pipe, unit, caller),
  );
}

/**
 * Maintenance mode holds customers to reading: every customer request that is not a GET (of
 * their own data, their streams) nor a session step (logins are public, refresh and logout sit
 * under /auth/) is 503 MAINTENANCE, and so is self-registration. Staff are never held.
 */
const MAINTAINED_PUBLIC = /^\/customers\/register(\/|$)/;

async function refuseInMaintenance(unit: UnitOfWork): Promise<void> {
  const state = await maintenanceState(unit.em);
  if (state.enabled) throw maintenanceError(state);
}

/** The request's unit of work, forked on first use (see handle). */
class UnitOfWork {
  private fork: EntityManager | undefined;
  constructor(private readonly services: AppServices) {}
  readonly em = (): EntityManager => (this.fork ??= this.services.orm.em.fork() as EntityManager);
}

/** What the JSON body parser reads (see the request stack): every other body type is refused. */
const JSON_BODY_TYPES = ['application/json', 'application/*+json'];

function validated(
  route: RouteSpec,
  req: Request,
  res: Response,
  pipe: Pipeline,
  unit: UnitOfWork,
  caller: Caller | undefined,
): Promise<void> | undefined {
  // A body the JSON parser skipped (form data, text, no Content-Type) would otherwise read as
  // missing fields: say what is wrong with it instead. An empty body is no body (422 missing).
  if (route.body && req.headers['content-length'] !== '0' && req.is(JSON_BODY_TYPES) === false)
    throw new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send the request body as JSON, with Content-Type: application/json');
  let items: ValidationItem[] | undefined;
  // req.query is parsed on first read (express's getter): a route that declares none never pays for it.
  const params = route.params ? parsePart('path', route.params, req.params, (items ??= [])) : undefined;
  const query = route.query ? parsePart('query', route.query, req.query, (items ??= [])) : undefined;
  const body = route.body ? parsePart('body', route.body, req.body, (items ??= [])) : undefined;
  if (items?.length) throw new ValidationFailure(items);
  const input: Input = { params, query, body };

  const key = route.idempotent && caller ? req.get('idempotency-key') : undefined;
  if (key !== undefined) return idempotent(route, req, res, pipe, unit, caller!, input, key);

  const result = route.handler(context(req, res, pipe.services, unit, caller, input));
  if (isPromise(result)) return result.then((settled) => reply(route, req, res, pipe, settled));
  reply(route, req, res, pipe, result);
  return undefined;
}

interface Input {
  params: unknown;
  query: unknown;
  body: unknown;
}

async function idempotent(
  route: RouteSpec,
  req: Request,
  res: Response,
  pipe: Pipeline,
  unit: UnitOfWork,
  caller: Caller,
  input: Input,
  key: string,
): Promise<void> {
  const em = unit.em;
  const claim = await beginIdempotent(
    em().fork(),
    scopeOf(caller),
    key,
    requestHash(route.method, route.path, input.params, input.body),
  );
  if (claim.kind === 'replay') {
    res.setHeader('Idempotent-Replayed', 'true');
    pipe.sendJson(req, res, claim.status, claim.body);
    return;
  }
  let result;
  try {
    result = await route.handler(context(req, res, pipe.services, unit, caller, input));
    if (pipe.checkReplies && !route.raw && !res.headersSent) assertContract(route, result, pipe.services);
  } catch (err) {
    await abandonIdempotent(em().fork(), claim.recordId);
    throw err;
  }
  await completeIdempotent(em().fork(), claim.recordId, result?.status ?? 204, result?.body ?? null);
  write(route, req, res, pipe, result);
}

function context(
  req: Request,
  res: Response,
  services: AppServices,
  unit: UnitOfWork,
  caller: Caller | undefined,
  input: Input,
): Parameters<RouteSpec['handler']>[0] {
  return new HandlerContextImpl(input, unit, services, caller, req, res) as Parameters<RouteSpec['handler']>[0];
}

/** A class, not an object literal with a getter: its shape is shared by every request (hot path). */
class HandlerContextImpl {
  readonly body: unknown;
  readonly query: unknown;
  readonly params: unknown;
  constructor(
    input: Input,
    private readonly unit: UnitOfWork,
    readonly services: AppServices,
    readonly caller: Caller | undefined,
    readonly req: Request,
    readonly res: Response,
  ) {
    this.body = input.body;
    this.query = input.query;
    this.params = input.params;
  }
  get em(): EntityManager {
    return this.unit.em();
  }
}

function reply(route: RouteSpec, req: Request, res: Response, pipe: Pipeline, result: HandlerResult): void {
  if (pipe.checkReplies && !route.raw && !res.headersSent) assertContract(route, result, pipe.services);
  write(route, req, res, pipe, result);
}

function write(route: RouteSpec, req: Request, res: Response, pipe: Pipeline, result: HandlerResult): void {
  if (route.raw || res.headersSent) return;
  if (!result) {
    res.status(204).end();
    return;
  }
  if (result.headers) res.set(result.headers);
  if (result.body === undefined) res.status(result.status).end();
  else pipe.sendJson(req, res, result.status, result.body);
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | undefined)?.then === 'function';
}

/**
 * A reply that breaks its route's declared responses fails loudly: 500 CONTRACT_VIOLATION
 * naming the route, the status and every problem, and an error in the log. Error answers
 * (AppError, validation) come from the error handler, not from here, and are not checked.
 */
function assertContract(route: RouteSpec, result: HandlerResult, services: AppServices): void {
  const status = result?.status ?? 204;
  const problems = replyProblems(route, status, result?.body);
  if (problems.length === 0) return;
  const name = `${route.method.toUpperCase()} ${route.path}`;
  services.logger.error({ route: name, status, problems }, 'reply breaks its declared contract');
  throw new AppError(500, 'CONTRACT_VIOLATION', `${name} answered ${status} against its contract: ${problems.join('; ')}`);
}

function scopeOf(caller: Caller): string {
  if (caller.kind === 'customer') return `customer:${caller.customerId}`;
  return caller.kind === 'user' ? `user:${caller.userId}` : `api_token:${caller.tokenId}`;
}

function parsePart(where: Location, schema: z.ZodType, value: unknown, items: ValidationItem[]): unknown {
  // The text rule first: a field it refuses is reported once, for what is wrong with its text.
  const unsafe = unsafeInput(where, value);
  if (unsafe.length) {
    items.push(...unsafe);
    return undefined;
  }
  // reportInput: the failing value tells "missing" (undefined) apart from a wrong type.
  const parsed = schema.safeParse(value, { reportInput: true });
  if (parsed.success) return parsed.data;
  items.push(...zodIssuesToItems(where, parsed.error.issues, schema, value));
  return undefined;
}
