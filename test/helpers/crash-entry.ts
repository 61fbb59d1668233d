/**
 * A process that installs the service's crash policy, then fails the way the test asks
 * (argv[2]: `throw` in a request's context, `reject` in a job's), so the policy is tested as
 * main.ts uses it.
 */
import { installCrashPolicy } from '../../src/process-policy';
import { createLogger, logContext } from '../../src/platform/logger';

const logger = createLogger('info');
installCrashPolicy(logger, async () => {
  logger.info('stopped cleanly');
});
logger.info('ready');

if (process.argv[2] === 'throw') {
  logContext.run({ request_id: 'req-crash-1' }, () => {
    setTimeout(() => {
      throw new Error('a bug in a request handler');
    }, 10);
  });
} else {
  logContext.run({ job_id: 'job-crash-1', queue: 'mail' }, () => {
    void Promise.reject(new Error('a promise nobody awaited'));
  });
}
// Keep the process alive: only the policy may end it.
setInterval(() => undefined, 1000);
