import type { EntityManager } from '@mikro-orm/postgresql';
import { executeNamed } from '../../db/bound-statement';
import type { LiveEvent } from './live-feed';
import { REPLAY_AFTER, RESUME_POINT } from './streams.queries';

/** How far back a reconnect replays: the outbox keeps at least this long (retention floor). */
export const REPLAY_WINDOW_SECONDS = 24 * 3600;
const PAGE = 500;

export interface ReplayFilter {
  customerId?: string;
  types?: readonly string[];
  /** How far back (default the streams' 24 hours; the CRM feed reads 30 days). */
  windowSeconds?: number;
  /** Rows per page (default 500). */
  pageSize?: number;
}

interface Row {
  seq: string;
  publication_seq: string;
  id: string;
  type: string;
  created_at: Date;
  customer_id: string | null;
  data: Record<string, unknown> | string;
}

/**
 * Where a stream whose client last saw event `seq` resumes: that event's publication number,
 * or undefined when it cannot resume (the event is older than the window, or unknown), so the
 * client must reload its state (`reset`). Never a silent gap: events are replayed in the
 * order they were handed over, not written, so one that committed after a later-numbered one
 * still comes after the point.
 */
export async function resumePoint(
  em: EntityManager,
  seq: bigint,
  windowSeconds: number = REPLAY_WINDOW_SECONDS,
): Promise<bigint | undefined> {
  const [row] = await executeNamed<{ publication_seq: string }>(
    em,
    RESUME_POINT.bind({ seq: seq.toString(), window_seconds: windowSeconds }),
  );
  return row ? BigInt(row.publication_seq) : undefined;
}

/** Every matching published event after publication number `after` within the window, in publication order, page by page. */
export async function* replayAfter(em: EntityManager, after: bigint, filter: ReplayFilter): AsyncGenerator<LiveEvent[]> {
  let cursor = after;
  const limit = filter.pageSize ?? PAGE;
  for (;;) {
    const rows = await executeNamed<Row>(
      em,
      REPLAY_AFTER.bind({
        after: cursor.toString(),
        window_seconds: filter.windowSeconds ?? REPLAY_WINDOW_SECONDS,
        customer_id: filter.customerId ?? null,
        types: filter.types?.length ? JSON.stringify(filter.types) : null,
        limit,
      }),
    );
    if (rows.length === 0) return;
    const page = rows.map((r): LiveEvent => ({
      seq: String(r.seq),
      published: String(r.publication_seq),
      id: r.id,
      type: r.type,
      created_at: new Date(r.created_at).toISOString(),
      customer_id: r.customer_id,
      data: typeof r.data === 'string' ? (JSON.parse(r.data) as Record<string, unknown>) : r.data,
    }));
    yield page;
    cursor = BigInt(page[page.length - 1]!.published);
    if (rows.length < limit) return;
  }
}
