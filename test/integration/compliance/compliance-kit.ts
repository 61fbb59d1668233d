import { randomBytes } from 'node:crypto';
import type { TestApp, TestResponse } from '../../helpers/test-app';

/** The smallest files each format opens with, padded with noise so they are not all alike. */
export const FILES = {
  pdf: () => Buffer.concat([Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n', 'latin1'), randomBytes(300)]),
  jpeg: () =>
    Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0', 'latin1'), randomBytes(400)]),
  png: () =>
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d]),
      Buffer.from('IHDR', 'latin1'),
      randomBytes(200),
    ]),
};

export interface Part {
  name: string;
  value?: string;
  filename?: string;
  contentType?: string;
  data?: Buffer;
}

export const BOUNDARY = '----compliance-test-boundary-7f3a';

/** A multipart/form-data body built by hand, so a test controls every byte (and can cut it short). */
export function multipart(parts: Part[], options: { close?: boolean } = {}): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += '\r\n';
    if (p.contentType) head += `Content-Type: ${p.contentType}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`, 'utf8'), p.data ?? Buffer.from(p.value ?? '', 'utf8'), Buffer.from('\r\n'));
  }
  if (options.close !== false) chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

export async function postMultipart(
  app: TestApp,
  token: string,
  body: Buffer,
  contentType = `multipart/form-data; boundary=${BOUNDARY}`,
): Promise<TestResponse> {
  const res = await fetch(`${app.baseUrl}/customers/me/documents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
    body: new Uint8Array(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
}

/** Uploads one document the ordinary way. */
export function upload(
  app: TestApp,
  token: string,
  type: string,
  data: Buffer,
  filename = 'scan.pdf',
  contentType = 'application/pdf',
): Promise<TestResponse> {
  return postMultipart(
    app,
    token,
    multipart([
      { name: 'type', value: type },
      { name: 'file', filename, contentType, data },
    ]),
  );
}

/** Downloads a document's file as staff: status, headers and the exact bytes. */
export async function download(
  app: TestApp,
  token: string,
  id: string,
): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(`${app.baseUrl}/api/crm/documents/${id}/file`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

export async function setLevelTerms(app: TestApp, admin: string, level: number, terms: Record<string, unknown>): Promise<void> {
  const res = await app.request('PUT', `/api/admin/verification-levels/${level}`, {
    token: admin,
    body: { required_documents: [], can_trade: true, can_withdraw: true, ...terms },
  });
  if (res.status !== 200) throw new Error(`PUT level ${level}: ${res.status} ${res.text}`);
}
