import { sendPasswordReset } from '../domain/identity/password-reset';
import { PasswordResetJob } from '../jobs/password-reset.job';
import { defineProcessor } from './processor';

/** A reset request that passed the throttle: the customer lookup, the token and the mail row (see sendPasswordReset). */
export const passwordResetProcessor = defineProcessor(PasswordResetJob, async (request, { em, services }) => ({
  outcome: await sendPasswordReset(
    em,
    { jobs: services.jobs, mailSecrets: services.mailSecrets, resetUrl: services.config.passwordResetUrl },
    request,
  ),
}));
