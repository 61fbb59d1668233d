import { z } from 'zod';
import { queueReseal } from '../../domain/secrets/reseal';
import { sealedByKey } from '../../domain/secrets/sealed-columns';
import { asStaff } from '../http/access';
import { defineRoute, json, type RouteSpec } from '../http/route';

const SealedByKeySchema = z
  .record(z.string(), z.int())
  .describe(
    'How many stored secrets each key id seals; `(JWT_SECRET)` counts values of earlier releases. An id at 0 may be removed.',
  );

const KeysSchema = z
  .object({
    current_key_id: z.string().describe('The key new secrets are sealed under: the first of DATA_ENCRYPTION_KEYS'),
    key_ids: z.array(z.string()).describe('Every key id this process can unseal with'),
    sealed_by_key: SealedByKeySchema,
  })
  .meta({
    id: 'DataKeys',
    examples: [{ current_key_id: 'k2026b', key_ids: ['k2026b', 'k2026a'], sealed_by_key: { k2026b: 412, k2026a: 0 } }],
  });

const ResealQueuedSchema = z
  .object({
    job_id: z.string().describe('The re-seal job (queue `events`): its result lists what moved and what each key still seals'),
    queued: z
      .enum(['added', 'replaced', 'present'])
      .describe('`present`: a run is already waiting or running, and covers this request'),
    current_key_id: z.string(),
  })
  .meta({ id: 'ResealQueued', examples: [{ job_id: 'reseal-secrets', queued: 'added', current_key_id: 'k2026b' }] });

/** Data encryption keys for secrets at rest: where values stand, and the re-seal of a rotation. */
export const secretsRoutes: RouteSpec[] = [
  defineRoute({
    method: 'get',
    path: '/api/admin/secrets',
    operationId: 'getSecretKeys',
    summary: 'Data encryption keys: the current one, and how many secrets each seals',
    tags: ['broker settings'],
    access: { kind: 'staff', permission: 'manage_settings' },
    responses: { 200: { description: 'The keys and what they seal (never a key itself)', schema: KeysSchema } },
    handler: async ({ em, services }) =>
      json(200, {
        current_key_id: services.webhookSecrets.currentKeyId,
        key_ids: services.webhookSecrets.keyIds,
        sealed_by_key: await sealedByKey(em),
      }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/admin/secrets/reseal',
    operationId: 'resealSecrets',
    summary: 'Re-seal every secret at rest under the current key',
    description:
      'The step of a key rotation after every process runs with the new key first in DATA_ENCRYPTION_KEYS, before the old one is removed. ' +
      'Idempotent: one run at a time, and a run moves only what is not under the current key yet.',
    tags: ['broker settings'],
    access: { kind: 'staff', permission: 'manage_settings' },
    responses: { 202: { description: 'The re-seal job is queued', schema: ResealQueuedSchema } },
    handler: async ({ em, services, caller }) => {
      return json(202, await queueReseal(em, services.jobs, asStaff(caller), services.webhookSecrets.currentKeyId));
    },
  }),
];
