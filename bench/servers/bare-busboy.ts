import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import busboy from 'busboy';
import { Pool } from 'pg';
import { listenAndAnnounce } from './announce';

/**
 * The floor for POST /customers/me/documents: no framework, no token: busboy reads the form,
 * the file is gathered in memory and its first bytes checked, and a JSON answer of the same
 * shape goes back. What the service adds on top is authentication, sealing, and the
 * transaction that stores the document, its file and its event.
 *
 * With BARE_UPLOADS_DATABASE_URL set it is the durable floor: before answering, the bytes are
 * inserted into `bench_uploads` of that database in one statement (its own transaction), the
 * least any service that keeps an upload must do.
 */
const durable = process.env.BARE_UPLOADS_DATABASE_URL
  ? new Pool({ connectionString: process.env.BARE_UPLOADS_DATABASE_URL, max: 8 })
  : undefined;
// The bench drops the database at its end, which ends these connections: not an error here.
durable?.on('error', () => undefined);

function answer(res: import('node:http').ServerResponse, ok: boolean, body: string): void {
  res.writeHead(ok ? 201 : 422, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

const server = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/customers/me/documents') {
    res.writeHead(404).end();
    return;
  }
  const parser = busboy({ headers: req.headers, limits: { fileSize: 10 * 1024 * 1024 + 1, files: 1 } });
  let type = '';
  let file: Buffer | undefined;
  let name = '';
  parser.on('field', (field, value) => {
    if (field === 'type') type = value;
  });
  parser.on('file', (_field, stream, info) => {
    const chunks: Buffer[] = [];
    name = info.filename;
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => (file = Buffer.concat(chunks)));
  });
  parser.on('close', () => {
    const ok = file !== undefined && file.subarray(0, 5).toString('latin1') === '%PDF-';
    const id = randomUUID();
    const body = JSON.stringify({
      id,
      type,
      status: 'pending',
      file_name: name,
      content_type: 'application/pdf',
      size: file?.length ?? 0,
      created_at: new Date().toISOString(),
      reason: null,
    });
    if (!ok || !durable) return answer(res, ok, body);
    durable.query('insert into bench_uploads (id, body) values ($1, $2)', [id, file]).then(
      () => answer(res, true, body),
      () => res.writeHead(500).end(),
    );
  });
  parser.on('error', () => res.writeHead(422).end());
  req.pipe(parser);
});

listenAndAnnounce(server);
