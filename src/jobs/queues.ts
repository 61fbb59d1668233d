/**
 * Queue names are persistent identifiers: jobs already waiting in Redis carry them.
 * Do not rename one without draining it first.
 */
export const QUEUES = {
  mail: 'mail',
  simulator: 'simulator',
  bulkClose: 'bulk-close',
  orders: 'orders',
  events: 'events',
  risk: 'risk',
  webhooks: 'webhooks',
  engine: 'engine',
  reports: 'reports',
  eod: 'eod',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export const ALL_QUEUES: QueueName[] = Object.values(QUEUES);
