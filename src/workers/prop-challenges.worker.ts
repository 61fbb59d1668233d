import { closeOutChallenge } from '../domain/prop/challenge-decisions';
import { drainClosesForChallenges, queueCloseOuts } from '../domain/prop/challenge-consumer';
import { sweepChallenges } from '../domain/prop/challenge-evaluation';
import { PropAfterCloseJob, PropCloseOutJob, PropSweepJob } from '../jobs/prop-challenges.job';
import { defineProcessor } from './processor';

/** Closes a failed challenge's orders (see closeOutChallenge). */
export const propCloseOutProcessor = defineProcessor(PropCloseOutJob, async ({ challenge_id }, { em, services }) => ({
  outcome: await closeOutChallenge(em, services.quotes, challenge_id),
}));

/** Day starts, time limits, lagging close-outs and missed passes (see sweepChallenges). */
export const propSweepProcessor = defineProcessor(PropSweepJob, async (_payload, { em, services, logger }) => {
  const outcome = await sweepChallenges(em, services.quotes, { logger });
  await queueCloseOuts(services.jobs, [...outcome.timeLimited, ...outcome.closeOutsDue]);
  return outcome;
});

/** The rules after every close (see drainClosesForChallenges). */
export const propAfterCloseProcessor = defineProcessor(PropAfterCloseJob, async (_payload, { em, services, logger }) =>
  drainClosesForChallenges(em, { quotes: services.quotes, jobs: services.jobs, logger }),
);
