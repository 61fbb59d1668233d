import type { EventEmitter } from 'node:events';
import { Job, QueueEvents, type MinimalQueue } from 'bullmq';
import { duplicateForBlocking, type RedisClient } from '../platform/redis';
import type { QueueName } from './queues';

/** How often a wait reads its job's state, as a net under the job's events. */
const POLL_MS = 1_000;

/**
 * The process's only QueueEvents owner. A QueueEvents reads every event of its queue, so
 * one is opened lazily, on the first wait for a job of that queue, and shared by all
 * waiters in the process; callers that await a fan-out wait on one parent job.
 */
export class QueueEventsHub {
  private readonly events = new Map<QueueName, QueueEvents>();
  /** BullMQ does not close a connection it was handed, so the hub closes its own. */
  private readonly connections: RedisClient[] = [];
  /** Each wait in progress, by the function that ends it when the hub closes. */
  private readonly waits = new Set<() => void>();

  constructor(
    private readonly connection: RedisClient,
    private readonly prefix: string,
  ) {}

  /** The QueueEvents of a queue, opened on first use. */
  async for(queue: QueueName): Promise<QueueEvents> {
    let qe = this.events.get(queue);
    if (!qe) {
      // QueueEvents blocks on XREAD, which BullMQ only allows on a connection that retries forever.
      const connection = duplicateForBlocking(this.connection);
      this.connections.push(connection);
      qe = new QueueEvents(queue, { connection, prefix: this.prefix });
      qe.on('error', () => undefined);
      this.events.set(queue, qe);
      await qe.waitUntilReady();
    }
    return qe;
  }

  /**
   * Resolves with the job's return value, or rejects when it fails, `timeoutMs` passes or
   * the hub closes.
   *
   * The job's events are the fast path, but one can be missed: a QueueEvents just opened
   * reads its stream from the end only once its first XREAD is in, so a job finishing
   * between a look at its state and that read is never announced (seen behind a Redis
   * Cluster: the wait ran out with the job long done). So the job's state is also read at
   * once and then every POLL_MS while the wait lasts.
   */
  async waitFor(job: Job, timeoutMs: number): Promise<unknown> {
    // BullMQ emits `completed:<id>` and `failed:<id>` beside its typed events (its own
    // waitUntilFinished listens to them): one listener per wait, whatever the number of waits.
    const qe: EventEmitter = await this.for(job.queueName as QueueName);
    const id = job.id!;
    const completed = `completed:${id}`;
    const failed = `failed:${id}`;
    return new Promise((resolve, reject) => {
      // Every way out goes through `end`, which only ever runs from a later tick (events,
      // timers, the poll's await), after the timers below exist.
      const end = (finish: () => void) => {
        if (!this.waits.delete(close)) return; // ended already
        clearTimeout(timer);
        clearInterval(poller);
        qe.off(completed, onCompleted);
        qe.off(failed, onFailed);
        finish();
      };
      const onCompleted = ({ returnvalue }: { returnvalue: unknown }) => end(() => resolve(returnvalue));
      const onFailed = ({ failedReason }: { failedReason: string }) => end(() => reject(new Error(failedReason)));
      const close = () => end(() => reject(new Error(`Stopped waiting for job ${job.name} (id=${id}): closing`)));
      const poll = async () => {
        const state = await job.getState().catch(() => 'unknown');
        if (state !== 'completed' && state !== 'failed') return;
        // Undefined when removed since (removeOnComplete): finished, with nothing left to report.
        // Read through the job's own queue connection (the QueueEvents one is blocked on XREAD).
        const queue = (job as unknown as { queue: MinimalQueue }).queue;
        const finished = await Job.fromId(queue, id).catch(() => undefined);
        if (state === 'completed') onCompleted({ returnvalue: finished?.returnvalue });
        else onFailed({ failedReason: finished?.failedReason ?? `Job ${job.name} (id=${id}) failed` });
      };

      this.waits.add(close);
      qe.on(completed, onCompleted);
      qe.on(failed, onFailed);
      const timer = setTimeout(
        () => end(() => reject(new Error(`Job ${job.name} (id=${id}) did not finish within ${timeoutMs} ms`))),
        timeoutMs,
      );
      const poller = setInterval(() => void poll(), POLL_MS);
      void poll();
    });
  }

  /** How many QueueEvents this process has ever opened (one per queue, whatever the number of waits). */
  get openedCount(): number {
    return this.connections.length;
  }

  async close(): Promise<void> {
    for (const close of [...this.waits]) close();
    await Promise.all([...this.events.values()].map((qe) => qe.close()));
    this.events.clear();
    for (const connection of this.connections.splice(0)) connection.disconnect();
  }
}
