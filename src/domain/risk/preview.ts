import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Group } from '../../entities/group.entity';
import { RISK_RUN_STATUSES, RiskRun, type RiskCounts } from '../../entities/risk-run.entity';
import type { JobProducer } from '../../jobs/job-producer';
import { RiskApplyJob, RiskPreviewJob } from '../../jobs/risk.job';
import { errors, PermanentJobFailure, ValidationFailure } from '../../platform/errors';
import { classCountsQuery, type Window } from './classify';
import { actionGroupIds, RISK_CLASSES, type RiskClass, type RiskRuleInput, RiskRuleInputSchema } from './rule-input';

const DAY_MS = 86_400_000;

/** The preview answer, with the run's id and status for the status URL. */
export const RiskPreviewResultSchema = z.object({
  id: z.uuid(),
  status: z.enum(RISK_RUN_STATUSES),
  counts: z
    .object({ toxic: z.int(), watchlist: z.int(), normal: z.int(), unclassified: z.int() })
    .nullable()
    .describe('Accounts per class; null until the run has classified'),
  accounts_evaluated: z.int().nullable().describe('Trading accounts the conditions admit; null until classified'),
  window_start: z.iso.datetime(),
  window_end: z.iso.datetime(),
  created_at: z.iso.datetime(),
  completed_at: z.iso.datetime().nullable(),
  error: z.string().nullable().describe('Why the run failed; null otherwise'),
});
type RiskPreviewResult = z.output<typeof RiskPreviewResultSchema>;

export const RiskRunAcceptedSchema = z.object({ id: z.uuid(), status_url: z.string().meta({ format: 'uri-reference' }) });

export function riskPreviewAccepted(runId: string): z.output<typeof RiskRunAcceptedSchema> {
  return { id: runId, status_url: `/risk/previews/${runId}` };
}

export function riskRunView(run: RiskRun): RiskPreviewResult {
  return {
    id: run.id,
    status: run.status,
    counts: run.counts ?? null,
    accounts_evaluated: run.accountsEvaluated ?? null,
    window_start: run.windowStart.toISOString(),
    window_end: run.windowEnd.toISOString(),
    created_at: run.createdAt.toISOString(),
    completed_at: run.completedAt?.toISOString() ?? null,
    error: run.error ?? null,
  };
}

/** The window of a run requested now: the last `days` days up to this instant. */
export function windowEndingAt(end: Date, days: number): Window {
  return { start: new Date(end.getTime() - days * DAY_MS), end };
}

/** Groups the actions name must exist and be active (a group to move accounts into): 422 at the field. */
export async function assertActionGroups(em: EntityManager, input: RiskRuleInput, prefix: Array<string | number> = []) {
  const named = actionGroupIds(input.actions);
  if (!named.length) return;
  const groups = await em.find(Group, { id: { $in: [...new Set(named.map((n) => n.id))] } }, { fields: ['id', 'isActive'] });
  const active = new Set(groups.filter((g) => g.isActive).map((g) => g.id));
  const missing = named.filter((n) => !active.has(n.id));
  if (missing.length)
    throw new ValidationFailure(
      missing.map((n) => ({ loc: ['body', ...prefix, ...n.path], msg: 'No active group has this id', type: 'value_error' })),
    );
}

/**
 * A run of `kind` in the caller's unit of work, its input and window fixed now (a preview and
 * an apply of the same rule at the same moment classify alike). queueRiskRun commits it.
 */
export function createRiskRun(
  em: EntityManager,
  fields: { kind: RiskRun['kind']; input: RiskRuleInput; requestedBy: string | null; ruleId?: string },
): RiskRun {
  const window = windowEndingAt(new Date(), fields.input.rolling_window_days);
  return em.create(RiskRun, {
    ...fields,
    input: fields.input as unknown as Record<string, unknown>,
    windowStart: window.start,
    windowEnd: window.end,
  });
}

/**
 * Commits the run (and whatever else the unit of work holds), then queues its job. A queue
 * that refuses leaves the run `failed` with `unavailable` as its error, so it never looks
 * stuck, and the error goes on to the caller (503).
 */
export async function queueRiskRun(
  em: EntityManager,
  jobs: Pick<JobProducer, 'enqueue'>,
  job: typeof RiskPreviewJob | typeof RiskApplyJob,
  run: RiskRun,
  unavailable: string,
) {
  await em.flush();
  try {
    return await jobs.enqueue(job, { run_id: run.id });
  } catch (err) {
    await em.nativeUpdate(
      RiskRun,
      { id: run.id, status: 'running' },
      { status: 'failed', error: unavailable, completedAt: new Date() },
    );
    throw err;
  }
}

/**
 * POST /risk/rules/preview (endpoint 11): records the run and queues its job after the
 * commit. The run row is all a preview ever writes.
 */
export async function startRiskPreview(
  em: EntityManager,
  jobs: Pick<JobProducer, 'enqueue'>,
  input: RiskRuleInput,
  requestedBy: string | null,
) {
  await assertActionGroups(em, input);
  const run = createRiskRun(em, { kind: 'preview', input, requestedBy });
  return { runId: run.id, job: await queueRiskRun(em, jobs, RiskPreviewJob, run, 'The job queue was unavailable') };
}

export async function readRiskRun(em: EntityManager, runId: string, kind: RiskRun['kind']): Promise<RiskRun> {
  const run = await em.findOne(RiskRun, { id: runId, kind }, { refresh: true });
  if (!run) throw errors.notFound('Risk run');
  return run;
}

/** The counts of one classification, every class present. */
export function countsOf(rows: Array<{ risk_class: string; n: number }>): { counts: RiskCounts; evaluated: number } {
  const counts: RiskCounts = { toxic: 0, watchlist: 0, normal: 0, unclassified: 0 };
  for (const row of rows) if (RISK_CLASSES.includes(row.risk_class as RiskClass)) counts[row.risk_class as RiskClass] = row.n;
  return { counts, evaluated: Object.values(counts).reduce((a, b) => a + b, 0) };
}

/** The run's input and window as recorded. */
export function runInput(run: RiskRun): { input: RiskRuleInput; window: Window } {
  const parsed = RiskRuleInputSchema.safeParse(run.input);
  if (!parsed.success) throw new PermanentJobFailure(`risk run ${run.id} holds an input that no longer parses`);
  return { input: parsed.data, window: { start: run.windowStart, end: run.windowEnd } };
}

/**
 * The worker's half: classifies with one aggregate query (no order reaches Node) and records
 * the counts, once: a retry after a recorded outcome does nothing. Deterministic: the same
 * input, window and orders give the same counts.
 */
export async function runRiskPreview(em: EntityManager, runId: string): Promise<RiskCounts | null> {
  const run = await em.findOne(RiskRun, { id: runId, kind: 'preview' });
  if (!run) throw new PermanentJobFailure(`no risk preview run ${runId}`);
  if (run.status !== 'running') return run.counts ?? null;
  const { input, window } = runInput(run);
  const query = classCountsQuery(input, window);
  const { counts, evaluated } = countsOf(await withAggregateMemory(em, (tx) => tx.execute(query.sql, query.values)));
  await em.nativeUpdate(
    RiskRun,
    { id: runId, status: 'running' },
    { status: 'completed', counts, accountsEvaluated: evaluated, completedAt: new Date() },
  );
  return counts;
}

/**
 * The per-account hash aggregate needs a few tens of MiB for tens of thousands of accounts;
 * Postgres's default work_mem (4 MiB) spills it to disk in batches. A risk worker runs one
 * classification at a time per job slot, so it raises work_mem for its own statement only
 * (SET LOCAL, inside the statement's transaction).
 */
const AGGREGATE_WORK_MEM = '32MB';

export async function withAggregateMemory<T>(em: EntityManager, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  return em.transactional(async (tx) => {
    await tx.execute(`set local work_mem = '${AGGREGATE_WORK_MEM}'`);
    return work(tx);
  });
}

/** After the last attempt failed: the run is recorded failed, so nobody waits for it. */
export async function failRiskRun(em: EntityManager, runId: string, reason: string): Promise<void> {
  await em.nativeUpdate(RiskRun, { id: runId, status: 'running' }, { status: 'failed', error: reason, completedAt: new Date() });
}
