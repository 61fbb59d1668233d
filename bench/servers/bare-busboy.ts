import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import busboy from 'busboy';
import { listenAndAnnounce } from './announce';

/**
 * The floor for POST /customers/me/documents: no framework, no token, no database: busboy reads
 * the form, the file is gathered in memory and its first bytes checked, and a JSON answer of
 * the same shape goes back. What the service adds on top is authentication, sealing, and the
 * transaction that stores the document, its file and its event.
 */
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
    const body = JSON.stringify({
      id: randomUUID(),
      type,
      status: 'pending',
      file_name: name,
      content_type: 'application/pdf',
      size: file?.length ?? 0,
      created_at: new Date().toISOString(),
      reason: null,
    });
    res.writeHead(ok ? 201 : 422, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(body);
  });
  parser.on('error', () => res.writeHead(422).end());
  req.pipe(parser);
});

listenAndAnnounce(server);
