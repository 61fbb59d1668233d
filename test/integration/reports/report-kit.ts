import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inflateSync } from 'node:zlib';
import { waitFor, type TestApp, type TestResponse } from '../../helpers/test-app';

const run = promisify(execFile);

export interface Finished {
  report: any;
  file: TestResponse<any>;
  bytes: Buffer;
}

/** Asks for a report, waits for its build to finish, and downloads it when it completed. */
export async function buildReport(
  app: TestApp,
  token: string,
  body: unknown,
  base = '/api/backoffice/reports',
): Promise<Finished> {
  const asked = await app.request('POST', base, { token, body });
  if (asked.status !== 202) throw new Error(`report: expected 202, got ${asked.status} ${asked.text}`);
  return finish(app, token, asked.body.status_url as string);
}

export async function finish(app: TestApp, token: string, statusUrl: string): Promise<Finished> {
  const report = await waitFor(
    `the report at ${statusUrl} to finish`,
    async () => {
      const res = await app.request('GET', statusUrl, { token });
      return res.body.status === 'completed' || res.body.status === 'failed' ? res.body : undefined;
    },
    30_000,
  );
  if (report.status !== 'completed') return { report, file: undefined as never, bytes: Buffer.alloc(0) };
  const res = await fetch(`${app.baseUrl}${report.download_url}`, { headers: { authorization: `Bearer ${token}` } });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { report, file: { status: res.status, headers: res.headers, body: undefined, text: bytes.toString('utf8') }, bytes };
}

/** RFC 4180 records of a CSV text (quoted fields with commas, quotes and line breaks). */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i++;
    } else field += c;
  }
  if (field || record.length) records.push([...record, field]);
  return records;
}

/** CSV records as objects keyed by the header row. */
export function csvObjects(text: string): Array<Record<string, string>> {
  const [header, ...rows] = parseCsv(text);
  return rows.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i] ?? ''])));
}

/**
 * Renders the first page of a PDF to a grey PNG with poppler's pdftoppm and counts the pixels
 * that are not white: a blank page (or no page) counts none.
 */
export async function firstPageInk(pdf: Buffer): Promise<{ width: number; height: number; dark: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'report-pdf-'));
  try {
    await writeFile(join(dir, 'r.pdf'), pdf);
    await run('pdftoppm', [
      '-png',
      '-gray',
      '-r',
      '40',
      '-f',
      '1',
      '-l',
      '1',
      '-singlefile',
      join(dir, 'r.pdf'),
      join(dir, 'page'),
    ]);
    return inkOf(await readFile(join(dir, 'page.png')));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The text of one page of a PDF, as poppler's pdftotext reads it (the content streams are compressed). */
export async function pageText(pdf: Buffer, page: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'report-pdf-'));
  try {
    await writeFile(join(dir, 'r.pdf'), pdf);
    const { stdout } = await run('pdftotext', ['-layout', '-f', String(page), '-l', String(page), join(dir, 'r.pdf'), '-']);
    return stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Decodes an 8-bit grey or RGB PNG (undoing each row's filter) and counts the pixels darker than near-white. */
function inkOf(png: Buffer): { width: number; height: number; dark: number } {
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  const channels = png[25] === 0 ? 1 : png[25] === 2 ? 3 : 0;
  if (png[24] !== 8 || channels === 0) throw new Error(`unexpected PNG: depth ${png[24]}, colour type ${png[25]}`);
  const idat: Buffer[] = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    if (png.toString('latin1', at + 4, at + 8) === 'IDAT') idat.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  let dark = 0;
  let previous = Buffer.alloc(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = Buffer.from(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)));
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? line[i - channels]! : 0;
      const b = previous[i]!;
      const c = i >= channels ? previous[i - channels]! : 0;
      let add = 0;
      if (filter === 1) add = a;
      else if (filter === 2) add = b;
      else if (filter === 3) add = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        add = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      line[i] = (line[i]! + add) & 0xff;
    }
    for (let x = 0; x < width; x++) if (line[x * channels]! < 200) dark++;
    previous = line;
  }
  return { width, height, dark };
}
