import { AsyncLocalStorage } from 'node:async_hooks';
import pino, { type Logger } from 'pino';

/** What every log line written while serving one request (or running one job) carries. */
export interface LogContext {
  request_id?: string;
  job_id?: string;
  queue?: string;
}

export const logContext = new AsyncLocalStorage<LogContext>();

/**
 * Secrets never reach the logs: these paths are censored even if some code logs a whole
 * request body or header set by mistake.
 */
const REDACT = [
  'password',
  '*.password',
  '*.new_password',
  'secret',
  '*.secret',
  'token',
  '*.token',
  '*.refresh_token',
  '*.access_token',
  '*.totp_code',
  '*.code',
  'req.headers.authorization',
  'headers.authorization',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: REDACT, censor: '[redacted]' },
      // The request id comes from async context, so domain code need not pass a logger around.
      mixin: () => ({ ...logContext.getStore() }),
    },
    destination,
  );
}
