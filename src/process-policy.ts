import type { Logger } from 'pino';

/**
 * What the process does with an error nobody caught (an uncaughtException, or a rejected
 * promise nobody awaited): its state is unknown from then on, so it logs the error at
 * fatal level (the log line carries the request or job id of the async context it came
 * from, through the logger's mixin), stops as cleanly as it can within a short grace, and
 * exits non-zero for its supervisor (Docker, Kubernetes, systemd) to restart it. Jobs it held
 * return to their queue when their lock lapses; nothing is retried in a corrupt process.
 */
export interface CrashPolicyOptions {
  /** The longest the clean stop may take before the process exits anyway. */
  graceMs?: number;
  exit?: (code: number) => void;
}

export function installCrashPolicy(logger: Logger, stop: () => Promise<void>, options: CrashPolicyOptions = {}): void {
  const graceMs = options.graceMs ?? 3000;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let crashing = false;
  const crash = (kind: 'uncaughtException' | 'unhandledRejection') => (err: unknown) => {
    logger.fatal({ err, kind }, 'unexpected error: the process exits for its supervisor to restart it');
    if (crashing) return;
    crashing = true;
    setTimeout(() => exit(1), graceMs).unref();
    stop().then(
      () => exit(1),
      () => exit(1),
    );
  };
  process.on('uncaughtException', crash('uncaughtException'));
  process.on('unhandledRejection', crash('unhandledRejection'));
}
