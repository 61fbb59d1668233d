// First, before any native addon loads: under another Node.js this exits with one line saying
// how to get the right one (instead of a bare "Segmentation fault" from argon2).
import '../scripts/check-node';
import { ConfigError, loadConfig } from './config/config';
import { applyDotEnv } from './config/dotenv';
import { createLogger } from './platform/logger';
import { installCrashPolicy } from './process-policy';
import { startRuntime, type RuntimeOptions } from './runtime';
import { StartupRefused } from './startup-refused';

/**
 * `npm start`: create the database if missing, migrate, then run the tiers ROLE names
 * (all, api or worker). SIGTERM and SIGINT drain before exit. Exported for process tests,
 * which run it with test-only options (test/helpers/service-with-consumers.ts).
 */
export async function main(options: Omit<RuntimeOptions, 'logger'> = {}): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  const runtime = await startRuntime(config, { ...options, logger });

  let signalled = false;
  const shutdown = (signal: string) => {
    if (signalled) return;
    signalled = true;
    logger.info({ signal }, 'signal received');
    runtime.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  installCrashPolicy(logger, () => runtime.stop());
}

export function failedStart(err: unknown): never {
  if (err instanceof StartupRefused) {
    process.stderr.write(`${err.message}\n`);
    process.exit(err.exitCode);
  }
  process.stderr.write(`start-up failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
}

if (require.main === module) {
  // Only as the entry point: the process tests start main() with exactly the environment they set.
  applyDotEnv();
  main().catch(failedStart);
}
