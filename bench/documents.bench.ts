import { randomBytes } from 'node:crypto';
import { CHILD_EXEC_ARGV, type Figure, type Harness, type Server } from './lib/harness';
import { BENCH_ADMIN as ADMIN, ownDatabase, progressOf, request } from './lib/bench-kit';

/**
 * POST /customers/me/documents: uploads per second through the whole service (authentication,
 * busboy reading the multipart body, the content check, AES-256-GCM sealing, the transaction that
 * writes the document, its sealed file and its event) against a bare node:http server that only
 * parses the same body with busboy and answers the same shape. The file is a 256 KiB PDF:
 * large enough that reading and sealing it count, small enough that a run's rows stay modest.
 * The service runs as in production (ROLE=api, compiled, LOG_LEVEL silent) on a database of its
 * own, dropped at the end.
 *
 * A second figure sets the service against a durable floor: the same bare server, which also
 * inserts the uploaded bytes into a table of the same database before answering, so both
 * sides keep the file.
 */
const progress = progressOf('documents');
const FILE_BYTES = 256 * 1024;
const CONNECTIONS = 4;
const BOUNDARY = '----bench-documents-boundary';

function uploadBody(): Buffer {
  const file = Buffer.concat([Buffer.from('%PDF-1.7\n', 'latin1'), randomBytes(FILE_BYTES - 9)]);
  return Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="type"\r\n\r\nidentity\r\n`),
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="passport.pdf"\r\n`),
    Buffer.from('Content-Type: application/pdf\r\n\r\n'),
    file,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

export async function run(h: Harness): Promise<Figure[]> {
  const own = ownDatabase('documents', 1);
  const tag = own.tag;
  let api: Server | undefined;
  try {
    api = await h.start({ entry: 'servers/service.ts', name: 'api', execArgv: CHILD_EXEC_ARGV, env: own.apiEnv });
    const bare = await h.start({ entry: 'servers/bare-busboy.ts', name: 'bare-busboy', execArgv: CHILD_EXEC_ARGV });
    await own.pool.query('create table bench_uploads (id uuid primary key, body bytea not null)');
    const durable = await h.start({
      entry: 'servers/bare-busboy.ts',
      name: 'bare-busboy-durable',
      execArgv: CHILD_EXEC_ARGV,
      env: { BARE_UPLOADS_DATABASE_URL: own.env.BENCH_DATABASE_URL },
    });
    const staff = await request<{ access_token: string }>(api, 'POST', '/api/admin/users/login', '', ADMIN, 200);
    const email = `bench-${tag}@bench.test`;
    const password = `bench-${randomBytes(9).toString('base64url')}`;
    await request(
      api,
      'POST',
      '/api/crm/customers',
      staff.access_token,
      { email, password, first_name: 'Bench', last_name: 'Docs' },
      201,
    );
    const customer = await request<{ access_token: string }>(api, 'POST', '/api/customer/login', '', { email, password }, 200);
    const body = uploadBody();
    const contentType = `multipart/form-data; boundary=${BOUNDARY}`;
    progress(`uploading ${FILE_BYTES / 1024} KiB PDFs, ${CONNECTIONS} in flight`);
    const upload = {
      url: api.url('/customers/me/documents'),
      method: 'POST',
      headers: { authorization: `Bearer ${customer.access_token}`, 'content-type': contentType },
      body,
    };
    const against = (server: Server) => ({
      url: server.url('/customers/me/documents'),
      method: 'POST',
      headers: { 'content-type': contentType },
      body,
    });
    const window = { connections: CONNECTIONS, rounds: 3, durationMs: 3000, warmupMs: 1000 };
    return [
      await h.compare({
        name: `POST /customers/me/documents (${FILE_BYTES / 1024} KiB PDF) rps, service vs a bare busboy parse`,
        candidate: upload,
        baseline: against(bare),
        ...window,
      }),
      await h.compare({
        name: `POST /customers/me/documents (${FILE_BYTES / 1024} KiB PDF) rps, service vs a bare busboy parse storing the bytes in Postgres`,
        candidate: upload,
        baseline: against(durable),
        ...window,
      }),
    ];
  } finally {
    await api?.stop();
    await own.close();
  }
}
