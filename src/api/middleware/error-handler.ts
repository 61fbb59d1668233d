import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { AppError, ValidationFailure } from '../../platform/errors';
import { isDependencyUnavailable } from '../../platform/logger';

interface BodyParserError extends Error {
  type?: string;
  status?: number;
  body?: string;
}

/**
 * Codes for the client errors express and its parsers raise themselves (http-errors with a
 * 4xx `status`): a path whose percent-encoding does not decode, a body cut short, ...
 * Their messages may echo what the client sent, so the answer uses a fixed sentence.
 */
const CLIENT_ERRORS: Record<number, { code: string; detail: string }> = {
  400: { code: 'BAD_REQUEST', detail: 'The request could not be read (for example a path that does not decode)' },
  413: { code: 'PAYLOAD_TOO_LARGE', detail: 'The request body is too large' },
  415: { code: 'UNSUPPORTED_MEDIA_TYPE', detail: 'Unsupported body encoding' },
};

/**
 * Turns every error into the API's error bodies (docs/api-guide.md, Errors). Known errors keep their
 * status and code; anything else is logged with its stack and answered as a bare 500
 * INTERNAL that names only the request id.
 */
export function errorHandler(logger: Logger) {
  // express recognises an error handler by its four parameters.
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (res.headersSent) {
      res.end();
      return;
    }
    if (err instanceof ValidationFailure) {
      res.status(422).json({ detail: err.items });
      return;
    }
    if (err instanceof AppError) {
      res.set(err.headers).status(err.status).json({ detail: err.detail, code: err.code });
      return;
    }
    const parserError = err as BodyParserError;
    if (parserError?.type === 'entity.parse.failed') {
      res.status(422).json({
        detail: [{ loc: ['body', jsonErrorPosition(parserError.message)], msg: 'JSON decode error', type: 'json_invalid' }],
      });
      return;
    }
    if (parserError?.type === 'entity.too.large') {
      res.status(413).json({ detail: 'The request body is too large', code: 'PAYLOAD_TOO_LARGE' });
      return;
    }
    if (parserError?.type === 'encoding.unsupported' || parserError?.type === 'charset.unsupported') {
      res.status(415).json({
        detail: 'Unsupported body encoding: send JSON as UTF-8, without Content-Encoding',
        code: 'UNSUPPORTED_MEDIA_TYPE',
      });
      return;
    }
    if (parserError?.type === 'request.aborted') {
      res.status(400).json({ detail: 'The request was aborted', code: 'BAD_REQUEST' });
      return;
    }
    const status = typeof parserError?.status === 'number' ? parserError.status : 0;
    if (status >= 400 && status < 500) {
      const known = CLIENT_ERRORS[status] ?? { code: 'BAD_REQUEST', detail: 'The request could not be read' };
      res.status(status).json(known);
      return;
    }
    if (isDependencyUnavailable(err)) {
      logger.warn({ err, request_id: req.requestId }, 'dependency unavailable');
      res
        .status(503)
        .set('Retry-After', '1')
        .json({ detail: 'A service this request needs could not be reached; try again', code: 'SERVICE_UNAVAILABLE' });
      return;
    }
    logger.error({ err, request_id: req.requestId }, 'unhandled error');
    res.status(500).json({ detail: `Internal error (request id ${req.requestId})`, code: 'INTERNAL' });
  };
}

/** Pydantic reports the character offset of a JSON error; V8's message usually carries it. */
function jsonErrorPosition(message: string): number {
  const match = /position (\d+)/.exec(message);
  return match ? Number(match[1]) : 0;
}
