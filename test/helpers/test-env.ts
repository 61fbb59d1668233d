/**
 * What every app a test starts, in-process or spawned, runs with: a boot deadline a loaded
 * machine does not miss (TEST_BOOT_TIMEOUT_MS to change it), and a worker's /health and
 * /metrics on a free port, so several workers run side by side.
 */
export const TEST_PROCESS_ENV: Record<string, string> = {
  BOOT_TIMEOUT_MS: process.env.TEST_BOOT_TIMEOUT_MS ?? '120000',
  WORKER_HTTP_PORT: '0',
};
