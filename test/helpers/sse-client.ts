import { request, type IncomingMessage } from 'node:http';

export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/** A raw server-sent events client over node:http, so a test can hold it still (pause) or cut it. */
export interface SseClient {
  status: number;
  headers: IncomingMessage['headers'];
  /** The body as read so far, for error answers. */
  text: () => string;
  events: SseEvent[];
  comments: string[];
  ended: Promise<void>;
  isEnded: () => boolean;
  /** The first event (after `from`) matching `match`, waiting up to `timeoutMs`. */
  waitFor(match: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  pause(): void;
  resume(): void;
  close(): void;
}

export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      res.setEncoding('utf8');
      let raw = '';
      let pending = '';
      const events: SseEvent[] = [];
      const comments: string[] = [];
      const waiters: Array<() => void> = [];
      let ended = false;
      const endedPromise = new Promise<void>((done) => {
        const finish = () => {
          ended = true;
          waiters.splice(0).forEach((w) => w());
          done();
        };
        res.on('end', finish);
        res.on('close', finish);
        res.on('error', finish);
      });
      res.on('data', (chunk: string) => {
        raw += chunk.length < 10_000 && raw.length < 100_000 ? chunk : '';
        pending += chunk;
        const blocks = pending.split('\n\n');
        pending = blocks.pop() ?? '';
        for (const block of blocks) {
          const e: SseEvent = { event: 'message', data: '' };
          let isEvent = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else if (line.startsWith('id: ')) e.id = line.slice(4);
            else if (line.startsWith('event: ')) {
              e.event = line.slice(7);
              isEvent = true;
            } else if (line.startsWith('data: ')) {
              e.data = line.slice(6);
              isEvent = true;
            }
          }
          if (isEvent) events.push(e);
        }
        waiters.splice(0).forEach((w) => w());
      });
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        text: () => raw,
        events,
        comments,
        ended: endedPromise,
        isEnded: () => ended,
        waitFor(match, timeoutMs = 5000) {
          return new Promise((ok, fail) => {
            const timer = setTimeout(
              () => fail(new Error(`no matching event within ${timeoutMs} ms; got ${events.map((e) => e.event).join(',')}`)),
              timeoutMs,
            );
            const check = () => {
              const found = events.find(match);
              if (found) {
                clearTimeout(timer);
                ok(found);
              } else if (ended) {
                clearTimeout(timer);
                fail(new Error(`stream ended without a matching event; got ${events.map((e) => e.event).join(',')}`));
              } else waiters.push(check);
            };
            check();
          });
        },
        pause: () => res.pause(),
        resume: () => res.resume(),
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end();
  });
}
