import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { BulkCloseItem, BulkCloseRun } from '../../entities/bulk-close.entity';
import type { JobProducer } from '../../jobs/job-producer';
import { BulkCloseFinishJob, BulkCloseTicketJob, MAX_TICKETS_PER_JOB } from '../../jobs/bulk-close.job';
import { executeBound } from '../../db/bound-statement';
import { errors, PermanentJobFailure } from '../../platform/errors';
import { TtlCache } from '../../platform/ttl-cache';
import { namedStatement, type Statement } from '../../platform/named-sql';
import type { QuoteStore } from '../prices/quote-store';
import { findAccountByLogin } from '../accounts/accounts';
import { closeReadOrder, loadPricingTerms, type CloseOutcome, type PricingSource } from './close-order';
import { orderOfRow, type OrderRow } from './order-view';

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
export const BulkCloseAcceptedSchema = z.object({ id: z.uuid(), status_url: z.string().meta({ format: 'uri-reference' }) });

export function bulkCloseAccepted(runId: string): z.output<typeof BulkCloseAcceptedSchema> {
  return { id: runId, status_url: `/orders/bulk-close/${runId}` };
}

/** A run's item as bulkCloseResult reads it (ticket as text: a bigint). */
export interface RunItemRow {
  ticket: string;
  status: 'pending' | 'closed' | 'failed';
  reason: string | null;
}

const RUN_ITEMS = namedStatement<{ run_id: string }>(
  `select ticket, status, reason from bulk_close_items where run_id = :run_id order by ticket`,
);

/**
 * A run's items in ticket order, read as rows: the answer of a bulk close lists every ticket,
 * and hydrating an entity per item would cost more than the rest of the API's work for a run. The bench's
 * baseline reads them with the same statement.
 */
export function runItemsStatement(params: { run_id: string }): Statement {
  return RUN_ITEMS.bind(params);
}

/** The run as recorded by the workers: the API answers from the entities, never from job results. */
export async function bulkCloseResult(em: EntityManager, runId: string): Promise<BulkCloseResult> {
  const run = await em.findOne(BulkCloseRun, runId, { refresh: true });
  if (!run) throw errors.notFound('Bulk close run');
  const items = await executeBound<RunItemRow>(em, runItemsStatement({ run_id: runId }));
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
 * A run spreads over at most this many ticket jobs, so that a large run keeps every worker
 * slot busy (two processes of 8 jobs take 16 at once; 32 leaves a short tail), while a job's
 * pick-up and completion in BullMQ (four Redis calls with the timings, and the flow parent's
 * bookkeeping) are shared by its chunk's tickets.
 */
const JOBS_PER_RUN = 32;
/**
 * Small runs are cut no finer than this: one account's tickets queue on its row for the
 * closing statement anyway, so chunks of 4 (100 tickets / 32) bought no speed and paid a job
 * per 4 tickets, which is what 20 accounts closing at once spend their time on.
 */
const MIN_TICKETS_PER_JOB = 10;

/** BullMQ's largest priority (2^21); a run has far fewer chunks. */
const MAX_PRIORITY = 2_097_152;

/** The run's tickets in order, cut into chunks of ceil(n / 32), at least 10 and at most MAX_TICKETS_PER_JOB each. */
export function ticketChunks(tickets: string[]): string[][] {
  const size = Math.min(MAX_TICKETS_PER_JOB, Math.max(MIN_TICKETS_PER_JOB, Math.ceil(tickets.length / JOBS_PER_RUN)));
  const chunks: string[][] = [];
  for (let i = 0; i < tickets.length; i += size) chunks.push(tickets.slice(i, i + size));
  return chunks;
}

const OPEN_TICKETS = namedStatement<{ account_id: string }>(
  `select ticket from orders where account_id = :account_id and status = 'open' order by ticket`,
);

/** The account's open tickets in order, as rows (an entity per order bought nothing here); the bench's baseline reads them so too. */
export function openTicketsStatement(params: { account_id: string }): Statement {
  return OPEN_TICKETS.bind(params);
}

/**
 * Records a run with one item per ticket open right now, commits, then fans out one job
 * per chunk of tickets (ticketChunks) under a parent that finishes the run. Returns the run id and the parent job
 * (undefined when there was nothing to close and the run finished at once).
 */
export async function startBulkClose(
  em: EntityManager,
  jobs: Pick<JobProducer, 'enqueueFlow' | 'jobState'>,
  input: { login: number; comment?: string | null | undefined; requestedBy: string | null },
) {
  const account = await findAccountByLogin(em, input.login);
  if (!account) throw errors.notFound('Account');
  const { run, tickets } = await em.transactional(async (tx) => {
    const open = await executeBound<{ ticket: string }>(tx, openTicketsStatement({ account_id: account.id }));
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
      ticketChunks(tickets).map((chunk) => ({ run_id: run.id, tickets: chunk })),
      // The n-th chunk of every run waiting goes before the (n+1)-th of any: when several
      // accounts close at once, the jobs in flight close different accounts instead of all
      // queueing on the first run's account row (each closing statement holds it to commit).
      (index) => Math.min(index + 1, MAX_PRIORITY),
    );
    return { runId: run.id, job: parent };
  } catch (err) {
    // A timeout does not say the flow is missing: Redis may have added it and only its reply
    // was lost. The parent's id is fixed by the run, so ask. Landed: its jobs close the
    // tickets and finish the run (answered as running, 202). Missing, or Redis cannot say:
    // nothing will close these tickets, so record that and the run does not look stuck. Both
    // are safe, as each ticket's closing statement needs its item still pending: a job that
    // lands after the items failed closes nothing.
    const state = await jobs.jobState(BulkCloseFinishJob, { run_id: run.id });
    if (state !== 'unknown' && state !== 'unreachable') return { runId: run.id, job: undefined };
    await finishRun(em, run.id, 'The job queue was unavailable; nothing was closed');
    throw err;
  }
}

/** A run's item and its order (null columns when the order does not exist), as runTicketStatement reads them. */
export interface RunTicketRow extends Omit<OrderRow, 'ticket'> {
  item_status: 'pending' | 'closed' | 'failed';
  account_id: string | null;
  ticket: string | null;
}

const RUN_TICKET = namedStatement<{ run_id: string; ticket: string }>(`
select i.status as item_status, o.account_id, o.ticket, o.login, o.symbol, o.cmd, o.volume, o.open_price, o.contract_size,
       o.sl, o.tp, o.comment, o.status, o.created_at, o.closed_at, o.close_price, o.profit, o.close_reason, o.trailing_stop
  from bulk_close_items i left join orders o on o.ticket = i.ticket
 where i.run_id = :run_id and i.ticket = :ticket`);

/**
 * The one read of a ticket's close: its run item and its order, without locks (an open
 * order's terms never change, and the closing statement only matches an open order and a
 * pending item). closeRunTicket runs it, and so does the bench's plain-`pg` baseline.
 */
export function runTicketStatement(params: { run_id: string; ticket: string }): Statement {
  return RUN_TICKET.bind(params);
}

/**
 * Closes one ticket of a run and decides the run's item: closed (now, or already before)
 * in the same statement as the close itself, or failed with the reason when it cannot be
 * priced. A retry finds the item decided and does nothing. Round trips: one read (item and
 * order), the quotes (two HMGETs at once), one closing statement; the terms come from `termsOf`.
 */
export async function closeRunTicket(
  em: EntityManager,
  quotes: QuoteStore,
  runId: string,
  ticket: string,
  termsOf: PricingSource = loadPricingTerms,
): Promise<string> {
  const read = runTicketStatement({ run_id: runId, ticket });
  const [row] = await executeBound<RunTicketRow>(em, read);
  // A job for a ticket its run never had cannot succeed on any retry.
  if (!row) throw new PermanentJobFailure(`bulk close run ${runId} has no ticket ${ticket}`);
  if (row.item_status !== 'pending') return row.item_status;
  const outcome: CloseOutcome =
    row.ticket === null || row.account_id === null
      ? { kind: 'failed', reason: `Order ${ticket} does not exist` }
      : await closeReadOrder(
          em,
          quotes,
          orderOfRow({ ...row, ticket: row.ticket }),
          row.account_id,
          'bulk_close',
          runId,
          termsOf,
        );
  if (outcome.kind === 'closed' && outcome.booked) return 'closed';
  // Not booked by this call: the order was closed before, or cannot be priced.
  await em.nativeUpdate(
    BulkCloseItem,
    { runId, ticket, status: 'pending' },
    { status: outcome.kind, reason: outcome.kind === 'failed' ? outcome.reason : null, finishedAt: new Date() },
  );
  return outcome.kind;
}

/**
 * A job's chunk of a run's tickets, closed one after the other, each in its own
 * transaction (closeRunTicket): a retry of the chunk skips the tickets already decided.
 * Tickets the run never had fail the job for good, after the others are closed.
 */
export async function closeRunTickets(
  em: EntityManager,
  quotes: QuoteStore,
  runId: string,
  tickets: string[],
  termsOf: PricingSource = loadPricingTerms,
): Promise<string[]> {
  const statuses: string[] = [];
  const unknown: PermanentJobFailure[] = [];
  for (const ticket of tickets) {
    try {
      statuses.push(await closeRunTicket(em, quotes, runId, ticket, termsOf));
    } catch (err) {
      if (!(err instanceof PermanentJobFailure)) throw err;
      unknown.push(err);
      statuses.push('unknown');
    }
  }
  if (unknown.length) throw new PermanentJobFailure(unknown.map((e) => e.message).join('; '));
  return statuses;
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
 * The account and its pricing terms (loadPricingTerms) per run, account and symbol, shared by
 * the tickets of a run that one worker process closes, for at most a minute: a run prices with
 * the terms it found first, while quotes are still read for every ticket. Concurrent tickets
 * share one load. What the account read tells the close's hooks may be that old: it only
 * chooses the statement a close tries first (see closeAtPricing).
 */
export class RunTermsCache {
  private readonly entries: TtlCache<Awaited<ReturnType<PricingSource>>>;

  constructor(ttlMs = 60_000) {
    this.entries = new TtlCache(ttlMs);
  }

  forRun(runId: string): PricingSource {
    return (em, accountId, symbol) =>
      this.entries.get(`${runId}:${accountId}:${symbol}`, () => loadPricingTerms(em, accountId, symbol));
  }
}
