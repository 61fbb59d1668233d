import { Client } from 'pg';
import type { Logger } from 'pino';

/** The channel `domain_events_notify` (a statement trigger on domain_events) notifies as events commit. */
export const OUTBOX_CHANNEL = 'domain_events';
/** Wakes are at most this close together: a burst of commits is one relay run, which relays them all. */
const MIN_SPACING_MS = 5;
/** Reconnect delays after the listening connection is lost (the schedule relays meanwhile). */
const RECONNECT_MS = [100, 500, 2000, 5000] as const;

export interface OutboxWake {
  close(): Promise<void>;
}

/**
 * Listens for committed domain events and calls `wake` (which queues a relay run) for them,
 * so the outbox hands events over as they commit instead of on the relay's schedule, which
 * stays as the safety net (a notification is lost while this connection is down).
 *
 * The connection must be a direct, session-mode one (DATABASE_MIGRATION_URL): LISTEN binds
 * to a server session, and PgBouncer in transaction mode hands the session to other clients
 * between transactions (it refuses LISTEN outright). NOTIFY itself is safe behind the pooler:
 * the trigger sends it inside the writing transaction, and Postgres delivers it, to every
 * listening session of the database, when that transaction commits.
 *
 * Wakes never overlap and come at most every MIN_SPACING_MS; one that arrives while a wake is
 * being queued is queued after it, never dropped, so the last commit of a burst always gets a
 * run that starts after it.
 */
export function startOutboxWake(url: string, wake: () => Promise<void>, logger: Logger): OutboxWake {
  let client: Client | undefined;
  let closed = false;
  let failures = 0;
  let pending = false;
  let pumping = false;
  let timer: NodeJS.Timeout | undefined;

  const pump = async () => {
    if (pumping) return;
    pumping = true;
    try {
      while (pending && !closed) {
        pending = false;
        await wake().catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'could not queue an outbox relay run'));
        await new Promise((resolve) => setTimeout(resolve, MIN_SPACING_MS));
      }
    } finally {
      pumping = false;
    }
  };
  const notified = () => {
    pending = true;
    void pump();
  };

  const connect = async () => {
    if (closed) return;
    const next = new Client({ connectionString: url, application_name: 'outbox-wake' });
    next.on('notification', notified);
    next.on('error', (err) => {
      logger.warn({ err: err.message }, 'outbox wake: connection lost; the relay schedule carries on meanwhile');
      retry(next);
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${OUTBOX_CHANNEL}`);
      client = next;
      failures = 0;
      // Events may have committed while no one listened.
      notified();
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'outbox wake: could not listen; the relay schedule carries on meanwhile');
      retry(next);
    }
  };
  const retry = (failed: Client) => {
    if (client === failed) client = undefined;
    failed.removeAllListeners('notification');
    void failed.end().catch(() => undefined);
    if (closed || timer) return;
    const delay = RECONNECT_MS[Math.min(failures++, RECONNECT_MS.length - 1)];
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, delay);
  };

  void connect();
  return {
    close: async () => {
      closed = true;
      clearTimeout(timer);
      await client?.end().catch(() => undefined);
    },
  };
}
