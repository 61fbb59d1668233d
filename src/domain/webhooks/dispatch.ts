import type { EntityManager } from '@mikro-orm/postgresql';
import { executeNamed } from '../../db/bound-statement';
import { WEBHOOK_CONSUMER_NAME } from './consumer';
import { DISPATCH_LOCK, FAN_OUT, WEBHOOKS_DUE } from './webhooks.queries';

/** Any fixed key: the transaction-level advisory lock that lets one fan-out batch run at a time. */
const DISPATCH_LOCK_KEY = 0x77656268;
/** How often a run that found the lock taken tries again, and for how long at most (then the schedule carries on). */
const BUSY_RETRY_MS = 10;
const BUSY_WAIT_MAX_MS = 1000;

/**
 * One fan-out batch, in one statement under a lock: claims up to `limit` of the consumer's
 * inbox rows in write order, writes one webhook_messages row per active webhook that
 * subscribes to the event's type (`webhook.test` goes to the webhook it names, only), and
 * marks the rows processed. Batches run one at a time across workers: two committing in
 * parallel could make an account's later event visible to a deliverer before its earlier
 * one. The primary key (webhook, event) is the guard that no event is queued twice for a
 * webhook. Returns the webhooks that got messages.
 */
export async function fanOutBatch(
  em: EntityManager,
  limit: number,
): Promise<'busy' | { events: number; webhooks: string[]; lastSeq: string | null }> {
  return em.transactional(async (tx) => {
    const [lock] = await executeNamed<{ locked: boolean }>(tx, DISPATCH_LOCK.bind({ key: DISPATCH_LOCK_KEY }));
    if (!lock?.locked) return 'busy' as const;
    const [row] = await executeNamed<{ events: number; webhooks: string[] | null; last_seq: string | null }>(
      tx,
      FAN_OUT.bind({ consumer: WEBHOOK_CONSUMER_NAME, limit }),
    );
    return { events: row?.events ?? 0, webhooks: row?.webhooks ?? [], lastSeq: row?.last_seq ?? null };
  });
}

/**
 * Webhooks with an attempt due that nobody holds: an open delivery whose time has come and
 * whose lease (if any) has lapsed, or messages waiting and no open delivery. What the
 * schedule re-kicks: retries, work whose kick was lost, and deliveries a killed worker left.
 */
export async function webhooksDue(em: EntityManager, limit = 1000): Promise<string[]> {
  const rows = await executeNamed<{ id: string }>(em, WEBHOOKS_DUE.bind({ limit }));
  return rows.map((r) => r.id);
}

export interface DispatchRun {
  /** Inbox rows fanned out per transaction. */
  batchSize: number;
  /** Longest a run keeps starting batches. */
  budgetMs: number;
  /**
   * Queues the delivery of these webhooks; a kick lost only waits for the next scheduled run.
   * `after`: the last event just fanned out to them (none for the schedule's kicks of work due).
   */
  kick: (webhookIds: string[], after?: string) => Promise<void>;
  /** Whether to look for webhooks with deliveries due too (retries, lost kicks): the schedule's business, not every kick's. */
  lookForDue: boolean;
}

/**
 * One dispatch run: fans out batches while there is a full batch and budget left, kicking
 * the webhooks that got messages, then, when asked, the webhooks with deliveries due.
 */
export async function dispatchWebhooks(
  em: EntityManager,
  { batchSize, budgetMs, kick, lookForDue }: DispatchRun,
): Promise<{ events: number; kicked: number }> {
  const started = Date.now();
  let events = 0;
  const kicked = new Set<string>();
  let busySince: number | undefined;
  for (;;) {
    const batch = await fanOutBatch(em, batchSize);
    if (batch === 'busy') {
      // Kicked for rows the holder's batch may have claimed too early to see: end only after a batch of our own.
      busySince ??= Date.now();
      if (Date.now() - busySince >= BUSY_WAIT_MAX_MS) break;
      await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
      continue;
    }
    busySince = undefined;
    events += batch.events;
    // Every webhook that got messages, even one kicked by an earlier batch of this run: its run may be ending.
    if (batch.webhooks.length) await kick(batch.webhooks, batch.lastSeq ?? undefined);
    batch.webhooks.forEach((id) => kicked.add(id));
    if (batch.events < batchSize || Date.now() - started > budgetMs) break;
  }
  const due = lookForDue ? (await webhooksDue(em)).filter((id) => !kicked.has(id)) : [];
  await kick(due);
  return { events, kicked: kicked.size + due.length };
}
