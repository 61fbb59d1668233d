import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { announce, fail } from './announce';

/**
 * A local SMTP sink for mail benches: accepts every message and keeps nothing but a count,
 * in a process of its own so neither side of a comparison pays for it. Prints its port.
 */
function main(): void {
  let accepted = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    size: 10 * 1024 * 1024,
    onData(stream, _session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        accepted += 1;
        callback();
      });
    },
  });
  server.on('error', fail);
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.server.address() as AddressInfo;
    announce(port, async () => {
      process.stderr.write(`smtp sink accepted ${accepted} messages\n`);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
  });
}

main();
