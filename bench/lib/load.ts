import { Agent, request, type OutgoingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';

/**
 * A value fixed for the whole run, or computed per request from its sequence number. Sequence
 * numbers are unique within this process (across rounds and sides), e.g. for unique names.
 */
export type PerRequest<T> = T | ((seq: number) => T);

let seqCounter = 0;
export function nextSeq(): number {
  return seqCounter++;
}

export interface LoadOptions {
  url: string;
  method?: string;
  body?: PerRequest<string | Buffer | object>;
  headers?: PerRequest<OutgoingHttpHeaders>;
  connections: number;
  durationMs: number;
  warmupMs: number;
}

export interface LoadResult {
  /** Responses completed inside the measured window (after warm-up). */
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Requests that failed at the socket level. */
  errors: number;
  non2xx: number;
  /**
   * Share of one core this process used while measuring. Near 1 the generator, not the server,
   * set the pace.
   */
  loadCpu: number;
}

const STRAGGLER_GRACE_MS = 2000;

interface Reply {
  status: number;
  body: string;
}

type Encoded = { bytes: Buffer; type?: string };

/**
 * Closed loop: each of `connections` raw sockets sends one request and reads the whole response
 * before sending the next, so throughput is what the server sustains, not what we offer. A raw
 * `net` client with pre-serialised requests and a minimal parser costs the generator a fraction
 * of what node:http's client would, leaving the CPU to the server being measured.
 */
export async function measure(options: LoadOptions): Promise<LoadResult> {
  const url = new URL(options.url);
  if (url.protocol !== 'http:') throw new Error(`only http: URLs can be measured (got ${options.url})`);
  const method = options.method ?? 'GET';
  const build = (seq: number): Buffer => serialise(url, method, at(options.headers, seq), encode(at(options.body, seq)));
  // Serialised once, unless headers or body are computed per request.
  const fixed = typeof options.headers === 'function' || typeof options.body === 'function' ? undefined : build(0);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port) || 80;
  const sockets = new Set<Socket>();
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  const windowStart = start + options.warmupMs;
  const end = windowStart + options.durationMs;
  const latencies: number[] = [];
  let errors = 0;
  let non2xx = 0;

  // Requests in flight at the end may finish (uncounted), but a server that stopped answering
  // must not hold the run: after a grace period its sockets are dropped.
  const deadline = setTimeout(() => sockets.forEach((s) => s.destroy()), end - start + STRAGGLER_GRACE_MS);

  const loop = (): Promise<void> =>
    new Promise((resolve) => {
      // One socket at a time; a closed one (server hung up, error) is replaced while time remains.
      const open = (): void => {
        const socket = connect(port, host).setNoDelay(true);
        const reader = new ResponseReader(method === 'HEAD');
        sockets.add(socket);
        let sent = NaN; // NaN: nothing in flight
        const record = (status: number | undefined): void => {
          const done = performance.now();
          const began = sent;
          sent = NaN;
          if (done < windowStart || done > end) return;
          if (status === undefined) errors++;
          else {
            latencies.push(done - began);
            if (status < 200 || status > 299) non2xx++;
          }
        };
        const send = (): void => {
          if (performance.now() >= end) return void socket.destroy();
          const seq = nextSeq();
          sent = performance.now();
          socket.write(fixed ?? build(seq));
        };
        socket.on('data', (chunk: Buffer) => {
          const reply = reader.push(chunk);
          if (!reply) return;
          record(reply.status);
          if (reply.close) socket.destroy();
          else send();
        });
        socket.on('error', () => {}); // 'close' follows and counts the failure
        socket.on('close', () => {
          sockets.delete(socket);
          if (!Number.isNaN(sent)) record(undefined);
          if (performance.now() < end) open();
          else resolve();
        });
        send();
      };
      open();
    });
  try {
    await Promise.all(Array.from({ length: options.connections }, loop));
  } finally {
    clearTimeout(deadline);
  }
  const cpu = process.cpuUsage(cpuBefore);

  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    rps: latencies.length / (options.durationMs / 1000),
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    errors,
    non2xx,
    loadCpu: (cpu.user + cpu.system) / 1000 / (performance.now() - start),
  };
}

/** HTTP/1.1 request bytes; keep-alive is HTTP/1.1's default. A body gets its Content-Length. */
function serialise(url: URL, method: string, headers: OutgoingHttpHeaders = {}, body?: Encoded): Buffer {
  const given = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
  let head = `${method} ${url.pathname}${url.search} HTTP/1.1\r\n`;
  if (!given.has('host')) head += `Host: ${url.host}\r\n`;
  if (body?.type && !given.has('content-type')) head += `Content-Type: ${body.type}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name.toLowerCase() === 'content-length') continue;
    for (const v of Array.isArray(value) ? value : [value]) head += `${name}: ${v}\r\n`;
  }
  if (body) head += `Content-Length: ${body.bytes.length}\r\n`;
  const bytes = Buffer.from(`${head}\r\n`, 'latin1');
  return body ? Buffer.concat([bytes, body.bytes]) : bytes;
}

const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i;
const CHUNKED = /\r\ntransfer-encoding:[^\r]*chunked/i;
const CONNECTION_CLOSE = /\r\nconnection:[^\r]*close/i;

/** Finds where each response ends in the bytes of one connection; reads no more of a response than that takes. */
class ResponseReader {
  private buf: Buffer = Buffer.alloc(0);
  private status = 0;
  private close = false;
  /** Offset where the body ends (Content-Length); -1 until the head is read or when chunked. */
  private bodyEnd = -1;
  /** Offset of the next chunk-size line (chunked); -1 otherwise. */
  private chunkAt = -1;

  constructor(private readonly bodiless: boolean) {}

  push(chunk: Buffer): { status: number; close: boolean } | undefined {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    if (this.bodyEnd < 0 && this.chunkAt < 0 && !this.readHead()) return undefined;
    const end = this.chunkAt >= 0 ? this.readChunks() : this.buf.length >= this.bodyEnd ? this.bodyEnd : -1;
    if (end < 0) return undefined;
    this.buf = this.buf.subarray(end);
    this.bodyEnd = this.chunkAt = -1;
    return { status: this.status, close: this.close };
  }

  private readHead(): boolean {
    const at = this.buf.indexOf(HEAD_END);
    if (at < 0) return false;
    const head = this.buf.toString('latin1', 0, at);
    // "HTTP/1.1 200 OK": anything unreadable counts as status 0, a failure.
    this.status = Number(head.slice(9, 12)) || 0;
    this.close = CONNECTION_CLOSE.test(head);
    const bodyStart = at + HEAD_END.length;
    if (this.bodiless || this.status === 204 || this.status === 304) this.bodyEnd = bodyStart;
    else if (CHUNKED.test(head)) this.chunkAt = bodyStart;
    else this.bodyEnd = bodyStart + Number(CONTENT_LENGTH.exec(head)?.[1] ?? 0);
    return true;
  }

  /** Walks chunk-size lines to the last chunk (`0\r\n`) and the empty line after it; -1 until they have arrived. */
  private readChunks(): number {
    for (;;) {
      const lineEnd = this.buf.indexOf(CRLF, this.chunkAt);
      if (lineEnd < 0) return -1;
      const size = parseInt(this.buf.toString('latin1', this.chunkAt, lineEnd), 16) || 0;
      if (size === 0) {
        const end = this.buf.indexOf(HEAD_END, lineEnd);
        return end < 0 ? -1 : end + HEAD_END.length;
      }
      // May point past what has arrived: indexOf then finds nothing until it has.
      this.chunkAt = lineEnd + CRLF.length + size + CRLF.length;
    }
  }
}

/** One request outside any measurement: bench setup (create a user, log in) and pre-flight checks. */
export async function call(
  url: string,
  options: { method?: string; headers?: OutgoingHttpHeaders; body?: string | Buffer | object } = {},
): Promise<Reply> {
  const agent = new Agent({ keepAlive: false });
  const body = encode(options.body);
  try {
    return await new Promise((resolve, reject) => {
      const req = request(
        url,
        { agent, method: options.method ?? 'GET', headers: withBodyHeaders(options.headers, body) },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body?.bytes);
    });
  } finally {
    agent.destroy();
  }
}

function withBodyHeaders(headers: OutgoingHttpHeaders | undefined, body: Encoded | undefined): OutgoingHttpHeaders | undefined {
  if (!body) return headers;
  // An explicit length avoids chunked encoding, which real clients rarely send.
  return { ...(body.type ? { 'content-type': body.type } : {}), ...headers, 'content-length': body.bytes.length };
}

function encode(body: string | Buffer | object | undefined): Encoded | undefined {
  if (body === undefined) return undefined;
  if (Buffer.isBuffer(body)) return { bytes: body };
  if (typeof body === 'string') return { bytes: Buffer.from(body) };
  return { bytes: Buffer.from(JSON.stringify(body)), type: 'application/json' };
}

export function at<T>(value: PerRequest<T> | undefined, seq: number): T | undefined {
  return typeof value === 'function' ? (value as (seq: number) => T)(seq) : value;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}
