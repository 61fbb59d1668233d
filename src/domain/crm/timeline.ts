import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Customer } from '../../entities/customer.entity';
import { executeNamed } from '../../db/bound-statement';
import { readOnReplica } from '../../db/read-replica';
import { inScopeOr404, type CustomerScope } from '../../platform/customer-scope';
import { namedStatement } from '../../platform/named-sql';

export const TIMELINE_KINDS = ['event', 'note', 'task', 'message', 'staff_action'] as const;
export type TimelineKind = (typeof TIMELINE_KINDS)[number];

export const TimelineItemSchema = z
  .object({
    at: z.iso.datetime(),
    kind: z.enum(TIMELINE_KINDS),
    actor: z
      .string()
      .nullable()
      .describe('The staff user behind it (a note, a staff action); null for the system or the customer'),
    summary: z.string().meta({ examples: ['customer.created'] }),
    ref: z.object({ type: z.string(), id: z.string() }).meta({ id: 'TimelineRef' }).describe('The record the item comes from'),
  })
  .meta({ id: 'TimelineItem' });
export const TimelineSchema = z.object({
  items: z.array(TimelineItemSchema),
  next_before: z.iso.datetime().nullable().describe('Pass as `before` for the next page; null on the last page'),
});

/**
 * Each source of the timeline as a select of (at, kind, actor, summary, ref_type, ref_id),
 * read from the records as they are: nothing is written for the timeline.
 */
const SOURCES: Record<TimelineKind, string> = {
  event: `select created_at as at, 'event' as kind, null::text as actor, type as summary, 'event' as ref_type, id::text as ref_id
            from domain_events where customer_id = :customer_id::uuid and created_at < :before::timestamptz`,
  note: `select created_at as at, 'note' as kind, author_id::text as actor, left(body, 200) as summary, 'note' as ref_type, id::text as ref_id
           from customer_notes where customer_id = :customer_id::uuid and deleted_at is null and created_at < :before::timestamptz`,
  staff_action: `select created_at as at, 'staff_action' as kind,
                   case when actor_type = 'integration' then 'integration:' || actor_id::text else actor_id::text end as actor, action as summary, 'audit' as ref_type, id::text as ref_id
                   from audit_entries where entity_type = 'customer' and entity_id = :customer_id::text and created_at < :before::timestamptz`,
  task: `select created_at as at, 'task' as kind, null::text as actor, left(title, 200) as summary, 'task' as ref_type, id::text as ref_id
           from tasks where customer_id = :customer_id::uuid and created_at < :before::timestamptz`,
  message: `select m.created_at as at, 'message' as kind, null::text as actor, left(m.body, 200) as summary, 'message' as ref_type, m.id::text as ref_id
              from conversation_messages m join conversations c on c.id = m.conversation_id
             where c.customer_id = :customer_id::uuid and m.created_at < :before::timestamptz`,
};

interface Row {
  at: Date;
  kind: TimelineKind;
  actor: string | null;
  summary: string;
  ref_type: string;
  ref_id: string;
}

type TimelineOptions = { types?: TimelineKind[] | undefined; before?: string | undefined; limit: number };

/**
 * Newest first, `limit` items strictly before `before`, of the kinds asked for (every kind by
 * default). Read on the read replica once it has replayed every commit up to the request, so a
 * note just added is on the page.
 */
export function customerTimeline(
  em: EntityManager,
  scope: CustomerScope,
  customerId: string,
  options: TimelineOptions,
): Promise<z.output<typeof TimelineSchema>> {
  return readOnReplica(em, 'primary', (readEm) => timelinePage(readEm, scope, customerId, options));
}

async function timelinePage(
  em: EntityManager,
  scope: CustomerScope,
  customerId: string,
  options: TimelineOptions,
): Promise<z.output<typeof TimelineSchema>> {
  await inScopeOr404(em, scope, await em.findOne(Customer, customerId), (c) => c.id, 'Customer');
  const kinds = options.types?.length ? options.types : TIMELINE_KINDS;
  const parts = kinds.map((k) => `(${SOURCES[k]} order by at desc limit :limit)`);
  if (parts.length === 0) return { items: [], next_before: null };
  const statement = namedStatement<{ customer_id: string; before: string; limit: number }>(
    `select * from (${parts.join(' union all ')}) t order by at desc, ref_id desc limit :limit`,
  );
  const rows = await executeNamed<Row>(
    em,
    statement.bind({ customer_id: customerId, before: options.before ?? 'infinity', limit: options.limit }),
  );
  const items = rows.map((r) => ({
    at: new Date(r.at).toISOString(),
    kind: r.kind,
    actor: r.actor,
    summary: r.summary,
    ref: { type: r.ref_type, id: r.ref_id },
  }));
  return { items, next_before: items.length === options.limit ? items[items.length - 1]!.at : null };
}
