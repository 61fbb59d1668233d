import { randomBytes } from 'node:crypto';
import { watchEventLoop } from '../../helpers/event-loop';
import { adminToken, createCustomer, type LoggedIn } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { download, FILES, multipart, postMultipart } from './compliance-kit';

/**
 * Storing and serving documents of the largest allowed size, several at once, never holds the
 * event loop for more than 100 ms: the sealed bytes are read, opened and sent in bounded pieces,
 * so /health and every other request keep being answered meanwhile. Measured as CPU time of one
 * stretch without yielding (test/helpers/event-loop.ts), which a busy machine does not stretch.
 */
jest.setTimeout(180_000);

const MIB = 1024 * 1024;
const STALL_BOUND_MS = 100;
const PARALLEL = 3;

let app: TestApp;
let admin: string;
let customer: LoggedIn;

beforeAll(async () => {
  app = await startTestApp({ label: 'doctransfers' });
  admin = await adminToken(app);
  customer = await createCustomer(app, admin);
});
afterAll(() => app?.stop());

/** A PDF of exactly 10 MiB whose body is noise, so nothing along the way can compress it. */
function largestPdf(): Buffer {
  const head = FILES.pdf();
  return Buffer.concat([head, randomBytes(10 * MIB - head.length)]);
}

test('when three 10 MiB documents are uploaded and then downloaded at once, then no stretch of work holds the event loop over 100 ms and the bytes come back exact', async () => {
  const files = Array.from({ length: PARALLEL }, largestPdf);
  // The bodies are built before the watch: this process is the client as well as the service.
  const bodies = files.map((data) =>
    multipart([
      { name: 'type', value: 'identity' },
      { name: 'file', filename: 'passport.pdf', contentType: 'application/pdf', data },
    ]),
  );
  const ids: string[] = [];
  const storing = await watchEventLoop(app.baseUrl, async () => {
    const answers = await Promise.all(bodies.map((body) => postMultipart(app, customer.token, body)));
    for (const answer of answers) {
      expect(answer.status).toBe(201);
      ids.push((answer.body as { id: string }).id);
    }
  });
  const downloads: Buffer[] = [];
  const serving = await watchEventLoop(app.baseUrl, async () => {
    for (const got of await Promise.all(ids.map((id) => download(app, admin, id)))) {
      expect(got.status).toBe(200);
      downloads.push(got.bytes);
    }
  });
  downloads.forEach((bytes, i) => expect(bytes.equals(files[i]!)).toBe(true));
  expect({ storing: storing.polls > 0, serving: serving.polls > 0 }).toEqual({ storing: true, serving: true });
  // Both figures in the message when either fails.
  const longest = { storingMs: Math.round(storing.longestCpuMs), servingMs: Math.round(serving.longestCpuMs) };
  expect({ ...longest, within: Math.max(longest.storingMs, longest.servingMs) < STALL_BOUND_MS }).toEqual({
    ...longest,
    within: true,
  });
});
