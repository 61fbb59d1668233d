import { resealAll, SECRET_PURPOSES } from '../domain/secrets/sealed-columns';
import { ResealSecretsJob } from '../jobs/reseal-secrets.job';
import { defineProcessor } from './processor';

/** Re-seals every secret at rest under the current key; the outcome (moved, left per key id) is the job's result. */
export const resealSecretsProcessor = defineProcessor(ResealSecretsJob, async (_payload, { em, services, logger }) => {
  const outcome = await resealAll(em, {
    [SECRET_PURPOSES.mail]: services.mailSecrets,
    [SECRET_PURPOSES.webhook]: services.webhookSecrets,
    [SECRET_PURPOSES.totp]: services.identity.totpBox,
    [SECRET_PURPOSES.document]: services.documentSecrets,
    [SECRET_PURPOSES.integration]: services.integrationSecrets,
  });
  logger.info(outcome, 'secrets re-sealed');
  return outcome;
});
