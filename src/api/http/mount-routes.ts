import type { EntityManager } from '@mikro-orm/postgresql';
import type { Express, NextFunction, Request, Response } from 'express';
import type { z } from 'zod';
import { AppError, ValidationFailure, type Location, type ValidationItem } from '../../platform/errors';
import type { AppServices } from '../../app-services';
import { unsafeInput } from '../validation/safe-input';
import { zodIssuesToItems } from '../validation/zod-issues';
import { abandonIdempotent, beginIdempotent, completeIdempotent, requestHash } from '../../domain/idempotency/idempotency';
import type { Caller } from '../../domain/identity/caller';
import { authorize, checkRouteFamilies } from './access';
import { replyProblems } from './response-contract';
import { toExpressPath, type HandlerResult, type RouteSpec } from './route';

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
  const checkReplies = services.config.env === 'test';
  for (const route of routes) {
    app[route.method](toExpressPath(route.path), (req: Request, res: Response, next: NextFunction) => {
      req.routeTemplate = route.path;
      handle(route, req, res, services, checkReplies).catch(next);
    });
  }
}

async function handle(
  route: RouteSpec,
  req: Request,
  res: Response,
  services: AppServices,
  checkReplies: boolean,
): Promise<void> {
  // Nothing a token unlocks may sit in a shared or browser cache, refusals included.
  if (route.access.kind !== 'public' || req.headers.authorization !== undefined) res.set('Cache-Control', 'no-store');
  // Hot path: forking a unit of work costs more than everything else a light request does (a
  // CPU profile of GET /health put MikroORM's fork at about a quarter of the service's work), so
  // the request's fork is made when something first asks for it, and routes that never touch
  // the database (health, public reads from Redis) skip it. Everything uses this one fork.
  let fork: EntityManager | undefined;
  const em = (): EntityManager => (fork ??= services.orm.em.fork() as EntityManager);
  // Who asks comes before what they sent: a stranger learns nothing about a route's schema.
  const caller = await authorize(route.access, req, em, services.identity);

  const items: ValidationItem[] = [];
  const params = parsePart('path', route.params, req.params, items);
  const query = parsePart('query', route.query, req.query, items);
  const body = parsePart('body', route.body, req.body, items);
  if (items.length) throw new ValidationFailure(items);

  const key = route.idempotent ? req.get('idempotency-key') : undefined;
  const claim =
    key !== undefined && caller
      ? await beginIdempotent(em().fork(), scopeOf(caller), key, requestHash(route.method, route.path, params, body))
      : undefined;
  if (claim?.kind === 'replay') {
    res.set('Idempotent-Replayed', 'true').status(claim.status).json(claim.body);
    return;
  }
  let result;
  try {
    result = await route.handler({
      body,
      query,
      params,
      get em() {
        return em();
      },
      services,
      caller,
      req,
      res,
    });
    if (checkReplies && !route.raw && !res.headersSent) assertContract(route, result, services);
  } catch (err) {
    if (claim) await abandonIdempotent(em().fork(), claim.recordId);
    throw err;
  }
  if (claim) await completeIdempotent(em().fork(), claim.recordId, result?.status ?? 204, result?.body ?? null);
  if (route.raw || res.headersSent) return;
  if (!result) {
    res.status(204).end();
    return;
  }
  if (result.headers) res.set(result.headers);
  if (result.body === undefined) res.status(result.status).end();
  else res.status(result.status).json(result.body);
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

function parsePart(where: Location, schema: z.ZodType | undefined, value: unknown, items: ValidationItem[]): unknown {
  if (!schema) return undefined;
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
