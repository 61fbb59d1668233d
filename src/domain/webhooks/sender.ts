import { Agent, request } from 'undici';
import { checkEndpointUrl, EndpointRefused, guardedLookup, type Lookup } from './url-guard';

/** What an attempt's row records. */
export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** The first 1 KB of the answer (UTF-8, NUL removed). */
  responseBody: string | null;
  /** Retry-After of a failed answer, in milliseconds. */
  retryAfterMs?: number;
}

const RESPONSE_KEPT_BYTES = 1024;
/** Past this much answer the connection is cut rather than read on. */
const RESPONSE_READ_LIMIT = 64 * 1024;

export interface SenderOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  /** DNS, replaceable in tests (a name that rebinds to loopback). */
  lookup?: Lookup;
}

/**
 * The HTTP client of webhook deliveries: one undici Agent per process (keep-alive pools per
 * origin), a connect timeout and a total timeout per attempt, redirects never followed
 * (undici's request() follows none: a 3xx is a failed attempt), and every socket's address
 * checked when it connects (guardedLookup), besides the URL before each attempt.
 */
export class WebhookSender {
  private readonly agent: Agent;

  constructor(private readonly options: SenderOptions) {
    this.agent = new Agent({
      connect: { timeout: Math.min(5000, options.timeoutMs), lookup: guardedLookup(options.allowPrivate, options.lookup) },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      keepAliveTimeout: 4000,
    });
  }

  async send(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      checkEndpointUrl(url, this.options.allowPrivate);
    } catch (err) {
      if (err instanceof EndpointRefused) return failure(elapsed(), `refused: ${err.message}`);
      throw err;
    }
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    try {
      const res = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'trading-api-webhooks/1', ...headers },
        body,
        dispatcher: this.agent,
        signal,
      });
      const responseBody = await readHead(res.body);
      const statusCode = res.statusCode;
      const ok = statusCode >= 200 && statusCode < 300;
      return {
        ok,
        statusCode,
        durationMs: elapsed(),
        error: ok ? null : `the endpoint answered ${statusCode}`,
        responseBody,
        retryAfterMs: ok ? undefined : retryAfter(res.headers['retry-after']),
      };
    } catch (err) {
      return failure(elapsed(), describeError(err, this.options.timeoutMs));
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

function failure(durationMs: number, error: string): SendResult {
  return { ok: false, statusCode: null, durationMs, error: error.slice(0, 500), responseBody: null };
}

async function readHead(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string | null> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let read = 0;
  for await (const chunk of body) {
    read += chunk.length;
    if (keptBytes < RESPONSE_KEPT_BYTES) {
      const part = chunk.subarray(0, RESPONSE_KEPT_BYTES - keptBytes);
      kept.push(part);
      keptBytes += part.length;
    }
    if (read > RESPONSE_READ_LIMIT) {
      body.destroy();
      break;
    }
  }
  if (keptBytes === 0) return null;
  // Postgres text cannot hold NUL.
  return Buffer.concat(kept).toString('utf8').replaceAll(String.fromCharCode(0), '');
}

/** Retry-After as seconds or an HTTP date, in milliseconds; undefined when absent or unreadable. */
export function retryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function describeError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code;
  if (
    e.name === 'TimeoutError' ||
    e.name === 'AbortError' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT'
  )
    return `timeout: no complete answer within ${timeoutMs} ms`;
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return 'timeout: could not connect in time';
  if (code === 'EWEBHOOKADDRESS') return e.message ?? e.cause?.message ?? 'refused address';
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the host name does not resolve';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'the connection was closed before an answer';
  return `${code ?? e.name ?? 'error'}: ${e.message ?? ''}`.trim();
}
