import type { Request, Response } from 'express';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { z } from 'zod';
import type { Caller } from '../../platform/caller';
import type { Permission } from '../../domain/identity/permissions';
import type { AppServices } from '../../app-services';

/**
 * Who may call a route. Every route states it explicitly, so a route added without a
 * decision about access does not type-check, and `checkRouteFamilies` refuses a route whose
 * access does not fit its path family.
 * - `public`: no token needed (logins, refresh, health);
 * - `staff`: staff user tokens holding `permission`, or API tokens scoped to it;
 * - `customer`: customer tokens only;
 * - `session`: any token of a login session, staff or customer (session and TOTP routes);
 * - `staff_or_customer`: staff with `permission`, or a customer acting on its own objects;
 * - `authenticated`: any valid token, staff, customer or API token, whatever its permissions
 *   (reads every caller may make, such as the latest quotes).
 */
export type Access =
  | { kind: 'public' }
  | { kind: 'staff'; permission: Permission }
  | { kind: 'customer' }
  | { kind: 'session' }
  | { kind: 'staff_or_customer'; permission: Permission }
  | { kind: 'authenticated' };

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** A `text/event-stream` answer: its event names and the schema of each one's `data:`, and a sample of the stream. */
  eventStream?: { events: Record<string, z.ZodType>; example: string };
  /**
   * Fields of this answer's example that differ from the object's usual example: the state
   * this operation leaves the object in (an order just opened is `open`, with no close yet).
   */
  example?: Record<string, unknown>;
}

/** What a handler receives: parsed input, the request's unit of work, and the services. */
export interface HandlerContext<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  em: EntityManager;
  services: AppServices;
  /** Set on every route whose access is not public. */
  caller: Caller | undefined;
  req: Request;
  res: Response;
}

/** A handler returns the body (status 200), or a full reply. */
export type Reply = { status: number; body?: unknown; headers?: Record<string, string> };
export type HandlerResult = Reply | undefined;

type Infer<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteSpec<
  B extends z.ZodType | undefined = z.ZodType | undefined,
  Q extends z.ZodType | undefined = z.ZodType | undefined,
  P extends z.ZodType | undefined = z.ZodType | undefined,
> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI form: `/groups/{group_id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  access: Access;
  body?: B;
  query?: Q;
  params?: P;
  responses: Record<number, ResponseSpec>;
  /**
   * A body that is not JSON (a multipart/form-data upload), which the handler reads from the
   * request itself: its OpenAPI requestBody, written out. Exclusive with `body`.
   */
  requestBody?: Record<string, unknown>;
  /** Accepts an Idempotency-Key header: a retry with the same key and body replays the first answer. */
  idempotent?: boolean;
  /** Also authenticates with a single-use stream ticket as `?ticket=` (event streams: EventSource sends no header). */
  acceptsTicket?: boolean;
  /** Responses that are not JSON (Prometheus text, HTML): the handler writes them itself. */
  raw?: boolean;
  handler: (ctx: HandlerContext<Infer<B>, Infer<Q>, Infer<P>>) => Promise<HandlerResult> | HandlerResult;
}

/** Identity function whose only job is to infer a route's input types for its handler. */
export function defineRoute<
  B extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  P extends z.ZodType | undefined = undefined,
>(spec: RouteSpec<B, Q, P>): RouteSpec {
  return spec as unknown as RouteSpec;
}

export function json(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return { status, body, headers };
}
