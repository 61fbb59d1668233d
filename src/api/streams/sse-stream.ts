import type { Response } from 'express';
import type { StreamHolder } from '../../domain/streams/stream-slots';
import type { Caller } from '../../platform/caller';
import { wireEvent, type LiveEvent } from '../../domain/streams/live-feed';

export type StreamKind = 'quotes' | 'customer' | 'backoffice';

/** Events a stream may fall behind by before it is cut with `overflow`. */
export const MAX_BEHIND = 10_000;

/** One event's SSE frame, built once however many streams it goes to. */
const frames = new WeakMap<LiveEvent, string>();
export function eventFrame(e: LiveEvent): string {
  let frame = frames.get(e);
  if (frame === undefined) {
    frame = `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(wireEvent(e))}\n\n`;
    frames.set(e, frame);
  }
  return frame;
}

/** A frame without an id (quotes, account.updated, reset, overflow): it moves no resume point. */
export function plainFrame(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * One open `text/event-stream` response. Writes go to the socket while it takes them; once it
 * pushes back (`write` answers false) frames wait here until `drain`. Memory is bounded: at
 * most MAX_BEHIND waiting events (then the stream is cut with `overflow`, and the client
 * resumes with Last-Event-ID), and for quotes and account figures only the newest value per
 * key (a slow client skips to the newest).
 *
 * While it replays on a resume, live events are held (`buffering`) and released after the
 * replay; what the replay already sent is dropped, then and later (see goLive). Subscribed
 * before the replay's query, so nothing falls between the two.
 */
export class SseStream {
  private waiting: string[] = [];
  private latest = new Map<string, string>();
  private blocked = false;
  private buffered: LiveEvent[] | undefined;
  /** After a resume, the publication number the replay reached (see goLive). */
  private replayedUpTo: bigint | undefined;
  private ended = false;
  sent = 0;
  /** An API token caller's token hash: its auth-cache key, watched for revocation. */
  tokenHash: string | undefined;

  constructor(
    readonly id: string,
    private readonly res: Response,
    readonly kind: StreamKind,
    readonly caller: Caller,
    /** Whom the stream limits count this stream against: its session (or API token) and its principal. */
    readonly holder: StreamHolder,
    readonly filter: { customerId?: string; types?: ReadonlySet<string>; symbols?: ReadonlySet<string> },
    private readonly onSent: (kind: StreamKind, n: number) => void,
    private readonly onEnd: (stream: SseStream) => void,
    resuming: boolean,
  ) {
    if (resuming) this.buffered = [];
    res.on('drain', () => this.flush());
    res.on('close', () => this.finish());
  }

  get isOpen(): boolean {
    return !this.ended;
  }

  /** A live domain event. */
  push(e: LiveEvent): void {
    if (this.ended) return;
    // The replay sent it: its message can reach this process after the replay read it.
    if (this.replayedUpTo !== undefined && BigInt(e.published) <= this.replayedUpTo) return;
    if (this.buffered) {
      this.buffered.push(e);
      if (this.buffered.length > MAX_BEHIND) this.overflow();
      return;
    }
    this.enqueue(eventFrame(e));
  }

  /** A replayed event, written before any buffered live one. */
  replay(e: LiveEvent): void {
    if (!this.ended) this.enqueue(eventFrame(e));
  }

  /**
   * Ends the replay: releases the live events held meanwhile, and from now on drops every live
   * event the replay sent. Both follow publication order, and the replay read a prefix of it
   * (the relay hands batches over one at a time, each committed before the next is numbered),
   * so every event numbered up to the last replayed one was replayed, and none after it was:
   * no gap, no repeat, even for a message that reaches this process after the replay read it.
   */
  goLive(lastReplayed: bigint | undefined): void {
    const held = this.buffered ?? [];
    this.buffered = undefined;
    this.replayedUpTo = lastReplayed;
    for (const e of held) this.push(e);
    if (!this.blocked && this.latest.size) this.flush();
  }

  /** Only the newest value per key is kept while the client is behind. */
  latestOnly(key: string, frame: string): void {
    if (this.ended) return;
    // While a resume replays, figures wait too: `reset` and the replay come first.
    if (this.blocked || this.buffered) this.latest.set(key, frame);
    else this.write(frame);
  }

  /** Written even to a stream that has fallen behind (a comment, `reset`). */
  control(frame: string): void {
    if (!this.ended) this.write(frame, false);
  }

  /** Ends the stream cleanly (revocation, shutdown): the client may reconnect. */
  end(): void {
    if (this.ended) return;
    this.res.end();
    this.finish();
  }

  private enqueue(frame: string): void {
    if (this.blocked) {
      this.waiting.push(frame);
      if (this.waiting.length > MAX_BEHIND) this.overflow();
    } else this.write(frame);
  }

  private write(frame: string, counts = true): void {
    if (counts) {
      this.sent += 1;
      this.onSent(this.kind, 1);
    }
    if (!this.res.write(frame)) this.blocked = true;
  }

  private flush(): void {
    this.blocked = false;
    while (!this.blocked && this.waiting.length) {
      // Taken in one go: a socket that takes everything costs one splice, not one shift per frame.
      const frames = this.waiting;
      this.waiting = [];
      let i = 0;
      for (; i < frames.length && !this.blocked; i++) this.write(frames[i]!);
      if (i < frames.length) this.waiting = frames.slice(i).concat(this.waiting);
    }
    if (!this.blocked && this.latest.size) {
      const frames = [...this.latest.values()];
      this.latest.clear();
      for (const f of frames) this.write(f);
    }
  }

  /** Too far behind: a last `overflow` and the end; the client resumes with Last-Event-ID. */
  private overflow(): void {
    this.waiting = [];
    this.buffered = undefined;
    this.latest.clear();
    this.res.end(plainFrame('overflow', { detail: `more than ${MAX_BEHIND} events behind: reconnect with Last-Event-ID` }));
    // A client that never reads again would hold the socket and its last buffer for ever.
    setTimeout(() => this.res.destroy(), 10_000).unref();
    this.finish();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.waiting = [];
    this.buffered = undefined;
    this.latest.clear();
    this.onEnd(this);
  }
}
