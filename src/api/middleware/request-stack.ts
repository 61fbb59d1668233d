import express, { type Request, type RequestHandler } from 'express';
import helmet from 'helmet';
import type { Logger } from 'pino';
import type { Metrics } from '../../platform/metrics';
import { accessLog } from './access-log';
import { clientAddress, requestId } from './request-context';

/**
 * What every request passes through before its route, in order, each piece named so the
 * HTTP benchmark can measure it alone (bench/servers/express-layers.ts) against the same
 * middleware the service mounts.
 */
export interface RequestStackParts {
  logger: Logger;
  metrics: Metrics;
  /** The client's address as TRUST_PROXY allows it to be known. */
  resolveClient: Parameters<typeof clientAddress>[0];
  bodyLimitBytes: number;
}

/** Where outside systems call us (provider callbacks): their bodies are kept raw for signature checks. */
const INTEGRATIONS_PREFIX = '/api/integrations/';

export const REQUEST_STACK_LAYERS = ['request-id', 'security-headers', 'client-address', 'access-log', 'json-body'] as const;
export type RequestStackLayer = (typeof REQUEST_STACK_LAYERS)[number];

export function requestStackLayer(layer: RequestStackLayer, parts: RequestStackParts): RequestHandler {
  switch (layer) {
    case 'request-id':
      return requestId;
    case 'security-headers':
      // The OWASP REST header set on every answer: no sniffing, no framing, a CSP that lets a
      // JSON answer load nothing. HTML pages (/docs) set their own CSP on top of this.
      return fixedHeaders(
        helmet({
          contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
          frameguard: { action: 'deny' },
        }),
      );
    case 'client-address':
      return clientAddress(parts.resolveClient);
    case 'access-log':
      return accessLog(parts.logger, parts.metrics);
    case 'json-body':
      // inflate: false refuses gzip, deflate and br bodies with 415: no client of this API needs
      // them, and an encoded body is a decompression bomb or a malformed stream waiting to happen.
      return express.json({
        limit: parts.bodyLimitBytes,
        strict: true,
        inflate: false,
        type: ['application/json', 'application/*+json'],
        // Inbound integration calls are signed over their exact bytes: keep them for the check.
        verify: (req, _res, buf) => {
          if ((req as Request).url.startsWith(INTEGRATIONS_PREFIX)) (req as Request).rawBody = buf.toString('utf8');
        },
      });
  }
}

/**
 * Hot path: helmet chains one middleware per header (twelve calls and closures a request)
 * though, configured as above, every header is a constant. Run it once against a recording
 * response at start-up and set what it set, so helmet's configuration stays the one source of
 * the values. Valid only while every value is a constant: a per-request CSP directive (a
 * nonce function) would be frozen here, so the configuration above must not gain one.
 */
function fixedHeaders(middleware: RequestHandler): RequestHandler {
  const set: Array<[string, string]> = [];
  const removed: string[] = [];
  let continued = false;
  const recorder = {
    setHeader: (name: string, value: unknown) => {
      if (typeof value !== 'string') throw new Error(`security header ${name}: not a constant string`);
      set.push([name, value]);
    },
    removeHeader: (name: string) => removed.push(name),
  };
  (middleware as (req: unknown, res: unknown, next: (err?: unknown) => void) => void)({}, recorder, (err?: unknown) => {
    if (err) throw err;
    continued = true;
  });
  if (!continued) throw new Error('security headers: the middleware did not finish synchronously');
  return (_req, res, next) => {
    for (let i = 0; i < removed.length; i++) res.removeHeader(removed[i]!);
    for (let i = 0; i < set.length; i++) res.setHeader(set[i]![0], set[i]![1]);
    next();
  };
}

/** The whole stack, as the service mounts it: one middleware (see composeLayers). */
export function requestStack(parts: RequestStackParts): RequestHandler {
  return composeLayers(REQUEST_STACK_LAYERS.map((layer) => requestStackLayer(layer, parts)));
}

/**
 * Hot path: layers mounted one by one each cost a trip through express's router (its
 * next(), a layer match, a try around the call) on every request; composed, each layer
 * calls the next directly. The contract is express's: a layer calls next() to go on or
 * next(err) to stop with an error, synchronously or later (the JSON parser calls it once
 * the body has arrived), and a throw is passed on as an error.
 */
export function composeLayers(layers: RequestHandler[]): RequestHandler {
  return (req, res, done) => {
    let i = 0;
    const next = (err?: unknown): void => {
      if (err || i === layers.length) {
        done(err);
        return;
      }
      const layer = layers[i++]!;
      try {
        void layer(req, res, next);
      } catch (thrown) {
        done(thrown);
      }
    };
    next();
  };
}
