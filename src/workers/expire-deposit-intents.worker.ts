import { ExpireDepositIntentsJob } from '../jobs/expire-deposit-intents.job';
import { expireDueIntents } from '../domain/payments/deposit-intents';
import { defineProcessor } from './processor';

export const expireDepositIntentsProcessor = defineProcessor(ExpireDepositIntentsJob, async (_payload, { em }) => ({
  expired: await expireDueIntents(em),
}));
