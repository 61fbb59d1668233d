import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { BulkCloseItem, BulkCloseRun } from '../../entities/bulk-close.entity';
import { Order } from '../../entities/order.entity';
import type { JobProducer } from '../../jobs/job-producer';
import { BulkCloseFinishJob, BulkCloseTicketJob } from '../../jobs/bulk-close.job';
import { errors, PermanentJobFailure } from '../../platform/errors';
import type { QuoteStore } from '../prices/quote-store';
import { findAccountByLogin } from '../accounts/accounts';
import { closeOrder, loadPricingTerms, type PricingSource } from './market-orders';

/** The spec's Bulk close result, with the run's id, status and times. */
export const BulkCloseResultSchema = z.object({
  id: z.uuid(),
  status: z.enum(['running', 'completed']),
  login: z.int(),
  comment: z.string().nullable(),
  closed: z.array(z.int()),
  failed: z.array(z.object({ ticket: z.int(), reason: z.string() })),
  created_at: z.iso.datetime(),
  completed_at: z.iso.datetime().nullable(),
});
export type BulkCloseResult = z.output<typeof BulkCloseResultSchema>;

/** What a bulk close answers (202) when its tickets take longer than the wait. */
export const BulkCloseAcceptedSchema = z.object({ id: z.uuid(), status_url: z.string() });

export function bulkCloseAccepted(runId: string): z.output<typeof BulkCloseAcceptedSchema> {
  return { id: runId, status_url: `/orders/bulk-close/${runId}` };
}

/** The run as recorded by the workers: the API answers from the entities, never from job results. */
export async function bulkCloseResult(em: EntityManager, runId: string): Promise<BulkCloseResult> {
  const run = await em.findOne(BulkCloseRun, runId, { refresh: true });
  if (!run) throw errors.notFound('Bulk close run');
  const items = await em.find(BulkCloseItem, { runId }, { orderBy: { ticket: 'asc' }, refresh: true });
  return {
    id: run.id,
    status: run.status,
    login: Number(run.login),
    comment: run.comment ?? null,
    closed: items.filter((i) => i.status === 'closed').map((i) => Number(i.ticket)),
    failed: items.filter((i) => i.status === 'failed').map((i) => ({ ticket: Number(i.ticket), reason: i.reason ?? 'unknown' })),
    created_at: run.createdAt.toISOString(),
    completed_at: run.completedAt?.toISOString() ?? null,
  };
}

/**
 * Records a run with one item per ticket open right now, commits, then fans out one job
 * per ticket under a parent that finishes the run. Returns the run id and the parent job
 * (undefined when there was nothing to close and the run finished at once).
 */
export async function startBulkClose(
  em: EntityManager,
  jobs: Pick<JobProducer, 'enqueueFlow'>,
  input: { login: number; comment?: string | null | undefined; requestedBy: string | null },
) {
  const account = await findAccountByLogin(em, input.login);
  if (!account) throw errors.notFound('Account');
  const { run, tickets } = await em.transactional(async (tx) => {
    const open = await tx.find(
      Order,
      { account: account.id, status: 'open' },
      { fields: ['ticket'], orderBy: { ticket: 'asc' } },
    );
    const run = tx.create(BulkCloseRun, {
      login: account.login,
      comment: input.comment ?? null,
      requestedBy: input.requestedBy,
      ...(open.length === 0 ? { status: 'completed' as const, completedAt: new Date() } : {}),
    });
    await tx.flush();
    if (open.length)
      await tx.insertMany(
        BulkCloseItem,
        open.map((o) => ({ runId: run.id, ticket: o.ticket, status: 'pending' as const })),
      );
    return { run, tickets: open.map((o) => o.ticket) };
  });
  if (tickets.length === 0) return { runId: run.id, job: undefined };
  try {
    const parent = await jobs.enqueueFlow(
      BulkCloseFinishJob,
      { run_id: run.id },
      BulkCloseTicketJob,
      tickets.map((ticket) => ({ run_id: run.id, ticket })),
    );
    return { runId: run.id, job: parent };
  } catch (err) {
    // Nothing will close these tickets: record that, so the run does not look stuck.
    await finishRun(em, run.id, 'The job queue was unavailable; nothing was closed');
    throw err;
  }
}

/**
 * Closes one ticket of a run and decides the run's item: closed (now, or already before)
 * in the same statement as the close itself, or failed with the reason when it cannot be
 * priced. A retry finds the item decided and does nothing.
 */
export async function closeRunTicket(
  em: EntityManager,
  quotes: QuoteStore,
  runId: string,
  ticket: string,
  termsOf: PricingSource = loadPricingTerms,
): Promise<string> {
  const item = await em.findOne(BulkCloseItem, { runId, ticket }, { refresh: true });
  // A job for a ticket its run never had cannot succeed on any retry.
  if (!item) throw new PermanentJobFailure(`bulk close run ${runId} has no ticket ${ticket}`);
  if (item.status !== 'pending') return item.status;
  const outcome = await closeOrder(em, quotes, ticket, 'bulk_close', runId, termsOf);
  if (outcome.kind === 'closed' && outcome.booked) return 'closed';
  // Not booked by this call: the order was closed before, or cannot be priced.
  await em.nativeUpdate(
    BulkCloseItem,
    { runId, ticket, status: 'pending' },
    { status: outcome.kind, reason: outcome.kind === 'failed' ? outcome.reason : null, finishedAt: new Date() },
  );
  return outcome.kind;
}

/** Completes a run; tickets still undecided (their jobs failed for good) are recorded as failed. */
export async function finishRun(
  em: EntityManager,
  runId: string,
  undecidedReason = 'The close job failed after all retries',
): Promise<void> {
  await em.transactional(async (tx) => {
    const run = await tx.findOne(BulkCloseRun, runId, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!run || run.status === 'completed') return;
    await tx.nativeUpdate(
      BulkCloseItem,
      { runId, status: 'pending' },
      { status: 'failed', reason: undecidedReason, finishedAt: new Date() },
    );
    run.status = 'completed';
    run.completedAt = new Date();
  });
}

/**
 * Pricing terms (account, group rows, instruments) per run, account and symbol, shared by
 * the tickets of a run that one worker process closes, for at most a minute: a run prices
 * with the terms it found first, while quotes are still read for every ticket. Concurrent
 * tickets share one load.
 */
export class RunTermsCache {
  private readonly entries = new Map<string, { at: number; value: ReturnType<PricingSource> }>();

  constructor(private readonly ttlMs = 60_000) {}

  forRun(runId: string): PricingSource {
    return (em, accountId, symbol) => this.load(`${runId}:${accountId}:${symbol}`, () => loadPricingTerms(em, accountId, symbol));
  }

  private load(key: string, fetch: () => ReturnType<PricingSource>): ReturnType<PricingSource> {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    for (const [k, e] of this.entries) if (now - e.at >= this.ttlMs) this.entries.delete(k);
    const value = fetch();
    this.entries.set(key, { at: now, value });
    value.catch(() => this.entries.delete(key));
    return value;
  }
}
