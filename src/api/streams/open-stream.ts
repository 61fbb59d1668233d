import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Request, Response } from 'express';
import type { AppServices } from '../../app-services';
import type { Caller } from '../../platform/caller';
import { MAX_STREAMS_PER_PRINCIPAL, MAX_STREAMS_PER_SESSION, type StreamHolder } from '../../domain/streams/stream-slots';
import { replayAfter, resumePoint } from '../../domain/streams/replay';
import { readOnReplica } from '../../db/read-replica';
import { sha256Hex } from '../../platform/crypto';
import { customerScopeOf } from '../../platform/customer-scope';
import { AppError, errors } from '../../platform/errors';
import { plainFrame, SseStream, type StreamKind } from './sse-stream';

const LAST_EVENT_ID = /^\d{1,19}$/;

export interface StreamRequest {
  kind: StreamKind;
  caller: Caller;
  filter: SseStream['filter'];
  req: Request;
  res: Response;
  em: EntityManager;
  services: AppServices;
  /** `?last_event_id=`, for clients that cannot send the header. */
  lastEventId?: string;
}

/**
 * Opens a stream: takes one of the session's slots and one of its principal's (429 beyond
 * MAX_STREAMS_PER_SESSION or MAX_STREAMS_PER_PRINCIPAL, across processes), answers 200 `text/event-stream`, and registers the stream with the process's hub
 * before anything is read, so no live event can slip past it. A reconnect with Last-Event-ID
 * then replays from the outbox what came after that id while the live events wait in the
 * stream, and the two meet without a gap or a repeat (see SseStream.goLive).
 */
export async function openStream(r: StreamRequest): Promise<void> {
  const { services, req, res, caller } = r;
  const hub = services.streams;
  if (hub.isClosed) throw new AppError(503, 'SHUTTING_DOWN', 'This process is shutting down; reconnect');
  const lastEventId = r.kind === 'quotes' ? undefined : (req.get('last-event-id') ?? r.lastEventId);
  await hub.ready().catch(() => {
    throw new AppError(503, 'STREAMS_UNAVAILABLE', 'The live feed cannot be reached right now; try again shortly', {
      'Retry-After': '5',
    });
  });
  const id = randomUUID();
  const holder = holderOf(caller);
  const taken = await hub.slots.take(holder, id);
  if (taken === 'session_full') {
    const err = errors.rateLimited(5);
    throw new AppError(429, err.code, `At most ${MAX_STREAMS_PER_SESSION} streams may be open per session`, err.headers);
  }
  if (taken === 'principal_full')
    throw new AppError(
      429,
      'TOO_MANY_STREAMS',
      `At most ${MAX_STREAMS_PER_PRINCIPAL} streams may be open at once across all your sessions; close one first`,
      { 'Retry-After': '5' },
    );

  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    // nginx and its kind would otherwise hold events back to fill a buffer.
    'x-accel-buffering': 'no',
  });
  res.write('retry: 2000\n\n');
  const stream = new SseStream(
    id,
    res,
    r.kind,
    caller,
    holder,
    r.filter,
    (kind, n) => hub.sent(kind, n),
    (s) => hub.remove(s),
    lastEventId !== undefined,
  );
  if (caller.kind === 'api_token') stream.tokenHash = tokenHashOf(req);
  hub.add(stream);

  if (r.kind === 'customer') hub.accounts?.watch(r.filter.customerId!);
  if (r.kind === 'quotes') {
    const symbols = r.filter.symbols ? [...r.filter.symbols] : undefined;
    const current = symbols ? [...(await services.quotes.getMany(symbols)).values()] : await services.quotes.all();
    for (const q of current) hub.quoteFrame(stream, q);
    return;
  }
  if (lastEventId === undefined) return;
  try {
    // The replay reads the replica once it has replayed every commit up to now: the stream is
    // registered above, so an event handed over before this point is in the replay and one
    // after it reaches the stream live. A replica lost mid-replay: the primary goes on from
    // the last event replayed.
    let point: bigint | undefined;
    let last: bigint | undefined;
    const filter = {
      customerId: r.filter.customerId,
      staff: customerScopeOf(caller).staff,
      types: r.filter.types ? [...r.filter.types] : undefined,
    };
    await readOnReplica(r.em, 'primary', async (em) => {
      if (last === undefined) {
        point = LAST_EVENT_ID.test(lastEventId) ? await resumePoint(em, BigInt(lastEventId)) : undefined;
        if (point === undefined) return;
        last = point;
      }
      for await (const page of replayAfter(em, last, filter)) {
        if (!stream.isOpen) return;
        for (const e of page) stream.replay(e);
        last = BigInt(page[page.length - 1]!.published);
      }
    });
    if (!stream.isOpen) return;
    if (point === undefined) {
      stream.control(plainFrame('reset', { detail: 'Events after this id are no longer kept: reload your state' }));
      stream.goLive(undefined);
      return;
    }
    stream.goLive(last);
  } catch (err) {
    services.logger.warn({ err: (err as Error).message }, 'stream replay failed: ending the stream');
    stream.end();
  }
}

/** An API token is its own session and principal; a login's session counts against its customer or staff user. */
function holderOf(caller: Caller): StreamHolder {
  if (caller.kind === 'api_token') return { session: `token:${caller.tokenId}`, principal: `token-principal:${caller.tokenId}` };
  const principal = caller.kind === 'customer' ? `customer:${caller.customerId}` : `user:${caller.userId}`;
  return { session: `session:${caller.sessionId}`, principal };
}

function tokenHashOf(req: Request): string | undefined {
  const match = /^Bearer (\S+)$/i.exec(req.get('authorization')?.trim() ?? '');
  return match ? sha256Hex(match[1]!) : undefined;
}
