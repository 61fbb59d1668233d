import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { logContext } from '../../platform/logger';
import { deviceIdOf, runWithSignals } from '../../platform/request-signals';

/** A caller's own id is kept if it is short and plain; otherwise we mint one. */
const ACCEPTABLE_ID = /^[A-Za-z0-9._-]{8,64}$/;

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
    /** The route template (`/groups/{group_id}`) once matched: metrics and logs group by it. */
    routeTemplate?: string;
    /** The client's IP address as TRUST_PROXY allows it to be known (see client-address.ts). */
    clientIp: string | null;
    /** The exact body of an inbound integration call (`/api/integrations/...`), which its signature covers. */
    rawBody?: string;
  }
}

/**
 * Gives every request an id, sends it back in X-Request-Id, and puts it in async context
 * so every log line written while serving the request carries it.
 */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  // Node lower-cases header names: a plain property read, not req.get's alias lookup (hot path).
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && ACCEPTABLE_ID.test(incoming) ? incoming : randomUUID();
  req.requestId = id;
  res.setHeader('X-Request-Id', id);
  logContext.run({ request_id: id }, next);
}

/**
 * Resolves the client's address once per request, for sessions and the login throttle, and
 * keeps it with the `X-Device-Id` header (when well formed) as the request's fraud signals.
 */
export function clientAddress(resolve: (req: Request) => string | null) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    req.clientIp = resolve(req);
    runWithSignals({ ip: req.clientIp, deviceId: deviceIdOf(req.headers['x-device-id']) }, next);
  };
}
