import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { WebhookBodySchema } from '../../src/domain/webhooks/webhook-body';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** What the standardwebhooks package's verifier made of it (null: the signature failed). */
  verified: {
    events: Array<{ id: string; type: string; sequence: number; created_at: string; data: Record<string, unknown> }>;
  } | null;
  at: number;
}

/** How the receiver answers its n-th request (from 0); `hang` never answers. */
export type Behaviour = (
  n: number,
  received: Received,
) => { status: number; body?: string; headers?: Record<string, string> } | 'hang';

export interface Receiver {
  url: string;
  received: Received[];
  /** Every event id received, in arrival order (duplicates kept). */
  eventIds(): string[];
  /** Rejects if any body received did not match the published webhook body schema. */
  close(): Promise<void>;
}

/**
 * A real HTTP receiver on loopback, as an integrator would write one: it verifies every
 * request with the `standardwebhooks` package and the secret it was given, records it, and
 * answers as `behaviour` says. Every body is also parsed with the webhook body schema the
 * OpenAPI document publishes; a mismatch is kept and makes `close()` reject, which fails the
 * test file that started the receiver.
 */
export async function startReceiver(secret: string, behaviour: Behaviour = () => ({ status: 204 })): Promise<Receiver> {
  const verifier = secret.startsWith('whsec_')
    ? new Webhook(secret)
    : new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });
  const received: Received[] = [];
  const mismatches: string[] = [];
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified: Received['verified'];
      try {
        verified = verifier.verify(body, req.headers as Record<string, string>) as Received['verified'];
      } catch {
        verified = null;
      }
      const parsed = WebhookBodySchema.safeParse(safeJson(body));
      if (!parsed.success) mismatches.push(`${body.slice(0, 300)}\n${parsed.error.message}`);
      const entry = { headers: req.headers, body, verified, at: Date.now() };
      const n = received.length;
      received.push(entry);
      const answer = behaviour(n, entry);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    eventIds: () => received.flatMap((r) => (r.verified?.events ?? []).map((e) => e.id)),
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (mismatches.length > 0)
        throw new Error(`${mismatches.length} webhook bodies did not match WebhookBodySchema:\n${mismatches.join('\n\n')}`);
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
