import { request } from 'node:http';
import { adminToken, createCustomer, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';
import { BOUNDARY, FILES } from './compliance-kit';

/**
 * An upload past the 10 MiB cap is refused as soon as the cap is passed, whether or not the
 * client declared a Content-Length: the client gets its 413 while it is still sending, and the
 * connection ends shortly after, instead of the service reading (or stalling on) a body of any
 * size first.
 */
jest.setTimeout(90_000);

let app: TestApp;
let customer: LoggedIn;

beforeAll(async () => {
  app = await startTestApp({ label: 'uploadcap', env: { ROLE: 'api' } });
  customer = await createCustomer(app, await adminToken(app));
});
afterAll(() => app?.stop());

const MIB = 1024 * 1024;

interface Outcome {
  status: number | undefined;
  body: string;
  /** Bytes of the body the client had handed to the socket when the answer's head arrived. */
  sentAtAnswer: number | undefined;
  answeredAfterMs: number | undefined;
  closedAfterMs: number | undefined;
  sentEverything: boolean;
}

/**
 * Sends a 40 MiB file as a multipart upload, in 64 KiB chunks as fast as the socket takes them,
 * and, like a careless client, goes on sending after the answer. Chunked unless `declare` is set.
 */
function sendUpload(declare: boolean): Promise<Outcome> {
  const head = Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="type"\r\n\r\nidentity\r\n` +
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
    ),
    FILES.pdf(),
  ]);
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  const chunks = Math.ceil((40 * MIB) / chunk.length);
  const length = head.length + chunks * chunk.length + tail.length;
  const started = Date.now();
  return new Promise((resolve) => {
    const outcome: Outcome = {
      status: undefined,
      body: '',
      sentAtAnswer: undefined,
      answeredAfterMs: undefined,
      closedAfterMs: undefined,
      sentEverything: false,
    };
    let sent = 0;
    const req = request(new URL('/customers/me/documents', app.baseUrl), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${customer.token}`,
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        ...(declare ? { 'content-length': String(length) } : {}),
      },
    });
    req.on('response', (res) => {
      outcome.status = res.statusCode;
      outcome.sentAtAnswer = sent;
      outcome.answeredAfterMs = Date.now() - started;
      res.setEncoding('utf8');
      res.on('data', (text: string) => (outcome.body += text));
      res.on('error', () => undefined);
    });
    req.on('error', () => undefined);
    req.on('close', () => {
      outcome.closedAfterMs = Date.now() - started;
      resolve(outcome);
    });
    req.write(head);
    sent = head.length;
    let i = 0;
    const pump = () => {
      while (i < chunks && !req.destroyed) {
        i++;
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once('drain', pump);
          return;
        }
      }
      if (req.destroyed) return;
      outcome.sentEverything = true;
      req.end(tail);
    };
    pump();
  });
}

async function stored(): Promise<number> {
  return (await sql<{ n: number }>(app, 'select count(*)::int as n from customer_documents'))[0]!.n;
}

test.each([
  ['without a Content-Length (chunked)', false],
  ['with its Content-Length', true],
])('when a 40 MiB file is sent %s, then 413 comes at the cap and the connection ends soon after', async (_what, declare) => {
  const before = await stored();
  const outcome = await sendUpload(declare);
  expect(outcome.status).toBe(413);
  expect(JSON.parse(outcome.body)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  // The answer came while the body was still coming: well short of 40 MiB (socket buffers
  // on both sides hold a few MiB at most).
  expect(outcome.sentAtAnswer!).toBeLessThan(24 * MIB);
  // The service read no further than a moment past it: the connection ended within seconds
  // of the answer, not when a client that keeps sending gives up.
  expect(outcome.closedAfterMs! - outcome.answeredAfterMs!).toBeLessThan(3000);
  expect(await stored()).toBe(before);
  // The service still answers.
  expect((await app.request('GET', '/customers/me/documents', { token: customer.token })).status).toBe(200);
});
