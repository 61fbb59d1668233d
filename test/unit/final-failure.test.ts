import { UnrecoverableError, type Job } from 'bullmq';
import pino from 'pino';
import { PermanentJobFailure } from '../../src/platform/errors';
import { UnsealError } from '../../src/platform/secret-box';
import { failJob } from '../../src/workers/final-failure';

const logger = pino({ level: 'silent' });
const job = () => ({ opts: {} }) as unknown as Job;

describe('the final-failure policy of jobs', () => {
  test('when a job fails permanently, then the failure is recorded with its reason and the job is not retried', async () => {
    const recorded: Array<string | null> = [];
    const failing = failJob(job(), new PermanentJobFailure('no such run'), {
      isLastAttempt: false,
      logger,
      record: async (reason) => void recorded.push(reason),
    });
    await expect(failing).rejects.toBeInstanceOf(UnrecoverableError);
    await expect(failing).rejects.toThrow('no such run');
    expect(recorded).toEqual(['no such run']);
  });

  test('when a job fails for a passing reason with attempts left, then nothing is recorded and the error is rethrown', async () => {
    const recorded: Array<string | null> = [];
    const err = new Error('connection reset');
    const failing = failJob(job(), err, { isLastAttempt: false, logger, record: async (r) => void recorded.push(r) });
    await expect(failing).rejects.toBe(err);
    expect(recorded).toEqual([]);
  });

  test('when the last attempt fails, then the failure is recorded without a reason and the error is rethrown', async () => {
    const recorded: Array<string | null> = [];
    const err = new Error('connection reset');
    const failing = failJob(job(), err, { isLastAttempt: true, logger, record: async (r) => void recorded.push(r) });
    await expect(failing).rejects.toBe(err);
    expect(recorded).toEqual([null]);
  });

  test('when recording fails, then the job still fails with its own error', async () => {
    const failing = failJob(job(), new PermanentJobFailure('gone'), {
      isLastAttempt: false,
      logger,
      record: async () => {
        throw new Error('database down');
      },
    });
    await expect(failing).rejects.toThrow('gone');
  });

  test('when a sealed value cannot be opened, then the job fails for good and stays on the dashboard', async () => {
    const j = job();
    await expect(
      failJob(j, new UnsealError('mail', 'the secret values of mail m1', 'unknown_key', 'k9'), { isLastAttempt: false, logger }),
    ).rejects.toBeInstanceOf(UnrecoverableError);
    expect(j.opts.removeOnFail).toEqual({ age: 7 * 24 * 3600 });
  });
});
