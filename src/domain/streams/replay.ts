import type { EntityManager } from '@mikro-orm/postgresql';
import { executeNamed } from '../../db/bound-statement';
import type { LiveEvent } from './live-feed';
import { REPLAY_AFTER, REPLAY_WINDOW } from './streams.queries';

/** How far back a reconnect replays: the outbox keeps at least this long (retention floor). */
export const REPLAY_WINDOW_SECONDS = 24 * 3600;
const PAGE = 500;

export interface ReplayFilter {
  customerId?: string;
  types?: readonly string[];
}

interface Row {
  seq: string;
  id: string;
  type: string;
  created_at: Date;
  customer_id: string | null;
  data: Record<string, unknown> | string;
}

/**
 * Whether a stream can resume after `after`: false when events between it and the replay
 * window's first event may have been missed (older than the window), so the client must
 * reload its state (`reset`). Sequence gaps left by rolled-back transactions make this err,
 * rarely, on the side of a reset, never on the side of a silent gap.
 */
export async function canResume(em: EntityManager, after: bigint): Promise<boolean> {
  const [row] = await executeNamed<{ floor: string | null; top: string | null }>(
    em,
    REPLAY_WINDOW.bind({ window_seconds: REPLAY_WINDOW_SECONDS }),
  );
  if (!row?.top) return true;
  if (row.floor === null) return after >= BigInt(row.top);
  return after >= BigInt(row.floor) - 1n;
}

/** Every matching published event after `after` within the window, in write order, page by page. */
export async function* replayAfter(em: EntityManager, after: bigint, filter: ReplayFilter): AsyncGenerator<LiveEvent[]> {
  let cursor = after;
  for (;;) {
    const rows = await executeNamed<Row>(
      em,
      REPLAY_AFTER.bind({
        after: cursor.toString(),
        window_seconds: REPLAY_WINDOW_SECONDS,
        customer_id: filter.customerId ?? null,
        types: filter.types?.length ? JSON.stringify(filter.types) : null,
        limit: PAGE,
      }),
    );
    if (rows.length === 0) return;
    const page = rows.map((r): LiveEvent => ({
      seq: String(r.seq),
      id: r.id,
      type: r.type,
      created_at: new Date(r.created_at).toISOString(),
      customer_id: r.customer_id,
      data: typeof r.data === 'string' ? (JSON.parse(r.data) as Record<string, unknown>) : r.data,
    }));
    yield page;
    cursor = BigInt(page[page.length - 1]!.seq);
    if (rows.length < PAGE) return;
  }
}
