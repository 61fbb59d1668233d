import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';

/**
 * Prism's validation proxy (`@stoplight/prism-cli`) in front of a test app: when
 * TEST_PRISM_DOCUMENT names an OpenAPI file (scripts/prism-check.sh sets it to
 * generated/openapi.json), every test app is reached through `prism proxy`, which checks each
 * request and each answer against the document and reports what breaks it in the
 * `sl-violations` header. `violationsOf` turns that header into failures:
 * - an answer that breaks the document always fails the test (the service lied);
 * - a request that breaks it fails only if the service accepted it (2xx/3xx): the tests that
 *   prove the service refuses bad input send such requests on purpose, and a refusal is the
 *   document and the service agreeing.
 * Prism runs without `--errors`: with it, Prism answers an invalid request itself (its own 422
 * or 401, never forwarded), so those tests would see Prism's answer instead of ours.
 */

export const PRISM_DOCUMENT = process.env.TEST_PRISM_DOCUMENT;

export interface PrismProxy {
  url: string;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;

export async function startPrismProxy(upstream: string, document: string): Promise<PrismProxy> {
  const port = await freePort();
  const cli = join(require.resolve('@stoplight/prism-cli/package.json'), '..', 'dist', 'index.js');
  const child = spawn(process.execPath, [cli, 'proxy', document, upstream, '--host', '127.0.0.1', '--port', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // Prism's own telemetry package stays quiet in tests.
    env: { ...process.env, SCARF_ANALYTICS: 'false', DO_NOT_TRACK: '1' },
  });
  let output = '';
  const listening = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`Prism did not start within ${START_TIMEOUT_MS} ms:\n${output}`)),
      START_TIMEOUT_MS,
    );
    const read = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('Prism is listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Prism exited with ${code} before listening:\n${output}`));
    });
  });
  try {
    await listening;
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  // Keep reading so Prism never blocks on a full pipe; its log is not needed once it listens.
  child.stdout.resume();
  child.stderr.resume();
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

interface Violation {
  location: string[];
  severity: string;
  code?: string | number;
  message: string;
}

/** What the `sl-violations` header of one answer says is wrong, as failures (see the header comment). */
export function violationsOf(method: string, path: string, status: number, header: string | null): string[] {
  if (!header) return [];
  if (!header.startsWith('[')) return [`${method} ${path} answered ${status}: Prism: ${header.slice(0, 2000)}`];
  const all = JSON.parse(header) as Violation[];
  const accepted = status < 400;
  return all
    .filter((v) => v.severity === 'Error' && (v.location[0] === 'response' || accepted))
    .map((v) => `${method} ${path} answered ${status}: ${v.location.join('.')}: ${v.message}`);
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
