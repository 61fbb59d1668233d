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
 * Where a withdrawal's payment data could sit in a log line: the field itself, a body or
 * record that carries it, and one level deeper (`{ req: { body: { payment_data } } }`).
 */
const PAYMENT_DATA_PATHS = [
  'payment_data',
  '*.payment_data',
  '*.*.payment_data',
  '*.*.*.payment_data',
  'paymentData',
  '*.paymentData',
  '*.*.paymentData',
];

/**
 * Secrets never reach the logs: these paths are censored even if some code logs a whole
 * request body or header set by mistake. Payment data (bank details, card tokens) is
 * personal data of the same kind.
 */
const REDACT = [
  ...PAYMENT_DATA_PATHS,
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

/**
 * A database error carries the data that failed: MikroORM puts the statement with its
 * parameters inlined in the message, and Postgres quotes the value in its message and
 * detail ("Key (email)=(...) already exists", "invalid input syntax for type uuid: ...").
 * Those are emails, names, payment data. This keeps what tells an operator where it failed
 * (SQLSTATE, constraint, table, column, routine) and drops every text that can hold a value.
 */
interface DatabaseErrorFields {
  code?: unknown;
  sqlState?: unknown;
  severity?: unknown;
  routine?: unknown;
  constraint?: unknown;
  table?: unknown;
  column?: unknown;
}

export function isDatabaseError(err: unknown): err is Error & DatabaseErrorFields {
  if (!(err instanceof Error)) return false;
  const e = err as DatabaseErrorFields;
  return typeof e.sqlState === 'string' || (typeof e.severity === 'string' && typeof e.routine === 'string');
}

/**
 * A dependency could not answer at all, as opposed to refusing a request: the database's
 * connection was cut, refused or is shutting down (SQLSTATE class 08, admin shutdown
 * 57P01-03, node-postgres's own connection errors, which carry no SQLSTATE), or Redis is
 * not connected. The request gets 503 and may be retried; the pools reconnect by themselves.
 */
export function isDependencyUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const state = String((err as DatabaseErrorFields).sqlState ?? (err as DatabaseErrorFields).code ?? '');
  if (state.startsWith('08') || ['57P01', '57P02', '57P03', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(state))
    return true;
  return /Connection terminated|not queryable|Connection ended|Connection is closed|Stream isn't writeable/i.test(err.message);
}

/** The database error's safe description: no statement, no message text, no detail. */
export function databaseErrorSummary(err: Error & DatabaseErrorFields): string {
  const code = String(err.sqlState ?? err.code ?? 'unknown');
  const where = [err.table, err.column, err.constraint].filter((v) => typeof v === 'string' && v).join(' / ');
  return `${err.name}: database error ${code}${err.routine ? ` in ${String(err.routine)}` : ''}${where ? ` (${where})` : ''}`;
}

export function serializeError(err: unknown): unknown {
  if (!isDatabaseError(err)) return pino.stdSerializers.err(err as Error);
  const stack = (err.stack ?? '')
    .split('\n')
    .filter((line) => line.trimStart().startsWith('at '))
    .join('\n');
  return {
    type: err.name,
    message: databaseErrorSummary(err),
    sqlState: err.sqlState ?? err.code,
    constraint: err.constraint,
    table: err.table,
    column: err.column,
    routine: err.routine,
    stack,
  };
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: REDACT, censor: '[redacted]' },
      serializers: { err: serializeError },
      // The request id comes from async context, so domain code need not pass a logger around.
      mixin: () => ({ ...logContext.getStore() }),
    },
    destination,
  );
}
