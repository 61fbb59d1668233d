import { z } from 'zod';
import { defineConsumer, processInbox } from '../../src/domain/events/consumers';
import { defineJob } from '../../src/jobs/job-definition';
import { QUEUES } from '../../src/jobs/queues';
import { defineProcessor } from '../../src/workers/processor';

/**
 * Consumers registered only in tests, shaped like the real ones to come: a journal of order
 * events (no worker: its rows just accumulate), and a customer timeline (every event that
 * names a customer, like notifications) whose worker the relay kicks and which drains its
 * inbox with processInbox, doing nothing else. Harmless: they touch only event_inbox.
 */
export const OrderJournal = defineConsumer({
  name: 'test.order-journal',
  wants: (e) => e.type.startsWith('order.'),
});

export const CustomerTimelineDrainJob = defineJob({
  name: 'test-customer-timeline-drain',
  queue: QUEUES.events,
  schema: z.object({}),
  options: { attempts: 3, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } },
});

export const CustomerTimeline = defineConsumer({
  name: 'test.customer-timeline',
  wants: (e) => e.customerId !== null,
  kick: CustomerTimelineDrainJob,
});

const customerTimelineDrain = defineProcessor(CustomerTimelineDrainJob, async (_payload, { em }) => {
  let processed = 0;
  for (;;) {
    const n = await processInbox(em, CustomerTimeline.name, 100, async () => undefined);
    if (n === 0) return { processed };
    processed += n;
  }
});

/** What startTestApp and the service child take to run with the test consumers. */
export const TEST_CONSUMERS = {
  consumers: [OrderJournal, CustomerTimeline],
  extraJobs: [{ definition: CustomerTimelineDrainJob, processor: customerTimelineDrain }],
};
