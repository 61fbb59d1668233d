import { z } from 'zod';
import { defineJob } from './job-definition';
import { QUEUES } from './queues';

/**
 * Moves every secret at rest to the current data encryption key (domain/secrets/sealed-columns.ts):
 * the step of a key rotation between deploying the new key first in DATA_ENCRYPTION_KEYS and
 * removing the old one. Queued by staff (POST /api/admin/secrets/reseal). One at a time (the
 * fixed id), and idempotent: a second run moves nothing. Not retried: a value that cannot be
 * unsealed stays so until the keys are fixed, and the failed run says which.
 * On the events queue: housekeeping of that pool, not worth a pool of its own.
 */
export const ResealSecretsJob = defineJob({
  name: 'reseal-secrets',
  queue: QUEUES.events,
  schema: z.object({}),
  options: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { age: 7 * 24 * 3600 } },
  jobId: () => 'reseal-secrets',
});
