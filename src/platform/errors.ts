/**
 * One error type for every failure a client can be told about.
 * Domain code throws these; one middleware turns them into response bodies. Anything else
 * that escapes is a bug and becomes 500 INTERNAL without details.
 */

export type Location = 'body' | 'query' | 'path' | 'header';

/** One entry of the 422 body, in the shape FastAPI/Pydantic clients already parse. */
export interface ValidationItem {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'AppError';
  }
}

/** A 422: a value failed validation or broke a business rule; `items` point at the fields. */
export class ValidationFailure extends Error {
  readonly status = 422;
  constructor(readonly items: ValidationItem[]) {
    super(items.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '));
    this.name = 'ValidationFailure';
  }
}

/** A business rule broken by one field: `fieldError('body', ['amount'], 'exceeds ...')`. */
export function fieldError(where: Location, path: (string | number)[], msg: string, type = 'value_error'): ValidationFailure {
  return new ValidationFailure([{ loc: [where, ...path], msg, type }]);
}

export const errors = {
  unauthenticated: (detail = 'Authentication required') =>
    new AppError(401, 'UNAUTHENTICATED', detail, { 'WWW-Authenticate': 'Bearer' }),
  forbidden: (detail = 'You are not allowed to do this') => new AppError(403, 'FORBIDDEN', detail),
  notFound: (what = 'Resource') => new AppError(404, 'NOT_FOUND', `${what} not found`),
  conflict: (code: string, detail: string) => new AppError(409, code, detail),
  rateLimited: (retryAfterSeconds: number) =>
    new AppError(429, 'RATE_LIMITED', 'Too many requests; try again later', {
      'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
    }),
  queueUnavailable: () =>
    new AppError(503, 'QUEUE_UNAVAILABLE', 'The job queue cannot be reached; nothing was changed, try again'),
};

/**
 * A job failure no retry can mend (what it works on does not exist, its input is wrong).
 * Domain code throws it without knowing the queue library; the worker host turns it into
 * BullMQ's UnrecoverableError, so the job fails at once instead of being retried.
 */
export class PermanentJobFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentJobFailure';
  }
}
