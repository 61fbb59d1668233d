import { Job, QueueEvents } from 'bullmq';
import { duplicateForBlocking, type RedisClient } from '../platform/redis';
import type { QueueName } from './queues';

/**
 * The process's only QueueEvents owner. A QueueEvents reads every event of its queue, so
 * one is opened lazily, on the first wait for a job of that queue, and shared by all
 * waiters in the process; callers that await a fan-out wait on one parent job.
 */
export class QueueEventsHub {
  private readonly events = new Map<QueueName, QueueEvents>();
  /** BullMQ does not close a connection it was handed, so the hub closes its own. */
  private readonly connections: RedisClient[] = [];

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

  /** Resolves with the job's return value, or rejects when it fails or `timeoutMs` passes. */
  async waitFor(job: Job, timeoutMs: number): Promise<unknown> {
    const qe = await this.for(job.queueName as QueueName);
    return job.waitUntilFinished(qe, timeoutMs);
  }

  /** How many QueueEvents this process has ever opened (one per queue, whatever the number of waits). */
  get openedCount(): number {
    return this.connections.length;
  }

  async close(): Promise<void> {
    await Promise.all([...this.events.values()].map((qe) => qe.close()));
    this.events.clear();
    for (const connection of this.connections.splice(0)) connection.disconnect();
  }
}
