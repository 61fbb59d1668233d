import type { Job } from 'bullmq';
import type { QueueEventsHub } from '../../jobs/queue-events-hub';
import { json, type Reply } from './route';

/**
 * The run pattern, for work the workers do and a client may wait for (bulk close, risk
 * previews, engine runs): the request records a run in the database (its rows are the truth
 * the workers report into), queues the work, and waits a bounded time on the one job that
 * finishes it. Done in time: 200 with the run as the entities record it. Not yet: 202 with
 * the run id and the URL that will show it. A failed or lost job changes nothing here: the
 * answer is always read from the entities, never from a job's return value.
 */
export interface RunStart {
  runId: string;
  /** The job whose completion finishes the run; none when the run finished as it was recorded. */
  job: Job | undefined;
}

export interface RunReplyOptions<R> {
  queueEvents: QueueEventsHub;
  /** How long the request may wait (e.g. BULK_CLOSE_WAIT_MS). */
  waitMs: number;
  /** Reads the run from the entities. */
  read: (runId: string) => Promise<R>;
  isDone: (run: R) => boolean;
  /** The 202 body: the run id and the URL that will show the run (its view lives beside the run's other views). */
  accepted: (runId: string) => unknown;
}

export async function runAndReply<R>(start: Promise<RunStart>, options: RunReplyOptions<R>): Promise<Reply> {
  const { runId, job } = await start;
  // A timeout or a failed job both mean "look at the entities": the workers record outcomes there.
  if (job) await options.queueEvents.waitFor(job, options.waitMs).catch(() => undefined);
  const run = await options.read(runId);
  if (!options.isDone(run)) return json(202, options.accepted(runId));
  return json(200, run);
}
