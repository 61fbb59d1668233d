import { failedStart, main } from '../../src/main';
import { TEST_CONSUMERS } from './test-consumers';

/** `src/main.ts` with the test consumers registered: spawnService(env, { entry: 'service-with-consumers' }). */
main(TEST_CONSUMERS).catch(failedStart);
