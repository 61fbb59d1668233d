import type { Processor } from './processor';
import { sendMailProcessor } from './send-mail.worker';

/** Every processor of the worker tier; checked against JOB_DEFINITIONS at start-up. */
export const PROCESSORS: Processor[] = [sendMailProcessor];
