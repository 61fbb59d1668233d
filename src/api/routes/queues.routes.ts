import { z } from 'zod';
import {
  JOB_STATES,
  QueueJobSchema,
  QueueSummarySchema,
  queueJobs,
  queueSummaries,
  retryFailedJob,
} from '../../domain/queues/queue-admin';
import { ALL_QUEUES, type QueueName } from '../../jobs/queues';
import { asStaff } from '../http/access';
import { pageQuery, pageSchema } from '../http/paging';
import { defineRoute, json, type RouteSpec } from '../http/route';

/** The queue dashboard's operations for scripts, with the same permissions. */
const QueueParam = z.enum(ALL_QUEUES as [QueueName, ...QueueName[]]).describe('A queue name');

export const queueRoutes: RouteSpec[] = [
  defineRoute({
    method: 'get',
    path: '/api/admin/queues',
    operationId: 'listQueues',
    summary: 'Every queue: jobs by state, the oldest waiting job’s age, paused',
    tags: ['queues'],
    access: { kind: 'staff', permission: 'view_queues' },
    responses: { 200: { description: 'The queues', schema: z.object({ items: z.array(QueueSummarySchema) }) } },
    handler: async ({ services }) => json(200, { items: await queueSummaries(services.jobs) }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/admin/queues/{queue}/jobs',
    operationId: 'listQueueJobs',
    summary: 'A queue’s jobs in one state, newest first',
    tags: ['queues'],
    access: { kind: 'staff', permission: 'view_queues' },
    params: z.object({ queue: QueueParam }),
    query: z.object({ state: z.enum(JOB_STATES).default('failed'), ...pageQuery() }),
    responses: { 200: { description: 'A page of jobs', schema: pageSchema(QueueJobSchema) } },
    handler: async ({ params, query, services }) =>
      json(200, await queueJobs(services.jobs, params.queue, query.state, query.page, query.page_size)),
  }),
  defineRoute({
    method: 'post',
    path: '/api/admin/queues/{queue}/jobs/{job_id}/retry',
    operationId: 'retryQueueJob',
    summary: 'Run a failed job again',
    tags: ['queues'],
    access: { kind: 'staff', permission: 'manage_queues' },
    params: z.object({ queue: QueueParam, job_id: z.string().min(1).max(200) }),
    responses: {
      200: { description: 'The job, back in the queue', schema: QueueJobSchema },
      409: { description: 'JOB_NOT_FAILED' },
    },
    handler: async ({ params, em, services, caller }) => {
      return json(200, await retryFailedJob(em, services.jobs, asStaff(caller), params.queue, params.job_id));
    },
  }),
];
