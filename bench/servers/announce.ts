import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The child side of the harness protocol: print the bound port (or, for a child that serves
 * no port, `ready`) as one JSON line on stdout, and stop cleanly when the harness goes away.
 */
export function announce(port: number | 'ready', stop: () => Promise<void>): void {
  let stopping = false;
  const shutdown = (): void => {
    if (stopping) return;
    stopping = true;
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`stop failed: ${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  // Ctrl-C reaches the whole process group, children included.
  process.on('SIGINT', shutdown);
  // A parent killed with SIGKILL sends no signal; its IPC channel closing is the only sign left.
  process.on('disconnect', shutdown);
  process.stdout.write(`${JSON.stringify(port === 'ready' ? { ready: true } : { port })}\n`);
}

/**
 * Listens on a free loopback port and announces it; stopping closes the server (idle
 * keep-alive sockets would otherwise hold close() open until they time out), then runs
 * `after` (closing a pool, say).
 */
export function listenAndAnnounce(server: Server, after: () => Promise<void> = async () => undefined): void {
  server.on('error', fail);
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    announce(port, async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
      await after();
    });
  });
}

/** Start-up failures must end the child, or the harness waits for a port that never comes. */
export function fail(err: unknown): never {
  process.stderr.write(`server failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
}
