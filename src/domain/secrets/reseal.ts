import type { EntityManager } from '@mikro-orm/postgresql';
import type { JobProducer } from '../../jobs/job-producer';
import { ResealSecretsJob } from '../../jobs/reseal-secrets.job';
import { recordAudit } from '../audit/audit';
import type { StaffCaller } from '../../platform/caller';

/**
 * Queues the re-seal of every secret at rest under the current key (one run at a time: the
 * job id is fixed), audited. The step of a key rotation after every process runs with the
 * new key first, before the old one is removed.
 */
export async function queueReseal(em: EntityManager, jobs: JobProducer, actor: StaffCaller, currentKeyId: string) {
  const queued = await jobs.ensureQueued(ResealSecretsJob, {});
  recordAudit(em, actor, {
    action: 'secrets.reseal_queued',
    entityType: 'data_encryption_key',
    entityId: currentKeyId,
    after: { queued },
  });
  await em.flush();
  return { job_id: ResealSecretsJob.jobId!({}), queued, current_key_id: currentKeyId };
}
