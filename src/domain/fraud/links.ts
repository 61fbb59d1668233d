import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { executeBound } from '../../db/bound-statement';

export const LINK_KINDS = [
  'device',
  'ip',
  'ip_range',
  'payment_instrument',
  'withdrawal_destination',
  'phone',
  'document_number',
] as const;
type LinkKind = (typeof LINK_KINDS)[number];

export const EvidenceSchema = z.object({
  kind: z.enum(LINK_KINDS),
  value_masked: z.string().describe('Enough to compare two entries, never the whole value'),
  first_seen: z.iso.datetime().nullable(),
  last_seen: z.iso.datetime().nullable(),
});

export const CustomerLinkSchema = EvidenceSchema.extend({
  customer_id: z.uuid().describe('The other customer'),
  evidence: EvidenceSchema,
});

export const MAX_LINKS = 100;

function mask(kind: LinkKind, value: string): string {
  if (kind === 'ip') {
    if (value.includes('.')) return value.replace(/\.\d+$/, '.x');
    return `${value.split(':').slice(0, 3).join(':')}:…`;
  }
  if (kind === 'ip_range') return value;
  if (value.length <= 4) return '*'.repeat(value.length);
  if (kind === 'withdrawal_destination') return `${value.slice(0, 6)}…`;
  return `${'*'.repeat(Math.min(value.length - 4, 8))}${value.slice(-4)}`;
}

/**
 * The other customers sharing something with this one: a device id (ever), an exact address (both
 * seen in the last 30 days), an IPv4 /24 or IPv6 /48 (both in the last 7 days), a payment
 * instrument, a withdrawal destination, a phone or a document number. Addresses on the
 * `allowed_ips` list (shared NAT) are never evidence. Newest evidence first, at most 100.
 */
export async function customerLinks(em: EntityManager, customerId: string): Promise<Array<z.output<typeof CustomerLinkSchema>>> {
  // Documents keep no number of their own yet, so a shared document number is not evidence here.
  const extra = [
    `select 'phone' as kind, o.phone as value, o.id as customer_id, null::timestamptz as first_seen, null::timestamptz as last_seen
       from customers o join customers me on me.id = :id and me.phone is not null and o.phone = me.phone where o.id <> :id`,
  ];
  const sql = `
    with allowed as (select jsonb_array_elements_text(items) as ip from fraud_lists where name = 'allowed_ips'),
    mine as (select * from fraud_signals where customer_id = :id),
    others as (select * from fraud_signals where customer_id <> :id)
    select * from (
      select 'device' as kind, o.device_id as value, o.customer_id, min(o.created_at) as first_seen, max(o.created_at) as last_seen
        from others o where o.device_id in (select device_id from mine where device_id is not null) group by 2, 3
      union all
      select 'ip', o.ip, o.customer_id, min(o.created_at), max(o.created_at)
        from others o
       where o.created_at > now() - interval '30 days'
         and o.ip in (select ip from mine where ip is not null and created_at > now() - interval '30 days')
         and o.ip not in (select ip from allowed) group by 2, 3
      union all
      select 'ip_range', r.net, r.customer_id, min(r.created_at), max(r.created_at)
        from (select o.customer_id, o.created_at,
                     network(set_masklen(o.ip::inet, case when family(o.ip::inet) = 4 then 24 else 48 end))::text as net
                from others o
               where o.created_at > now() - interval '7 days' and o.ip is not null and o.ip not in (select ip from allowed)) r
       where r.net in (select network(set_masklen(ip::inet, case when family(ip::inet) = 4 then 24 else 48 end))::text
                         from mine where ip is not null and created_at > now() - interval '7 days' and ip not in (select ip from allowed))
       group by 2, 3
      union all
      select 'payment_instrument', o.instrument, o.customer_id, min(o.created_at), max(o.created_at)
        from others o where o.instrument in (select instrument from mine where instrument is not null) group by 2, 3
      union all
      select 'withdrawal_destination', o.destination, o.customer_id, min(o.created_at), max(o.created_at)
        from others o where o.destination in (select destination from mine where destination is not null) group by 2, 3
      ${extra.map((e) => `union all ${e}`).join('\n')}
    ) links
    order by last_seen desc nulls last, kind, customer_id
    limit ${MAX_LINKS}`;
  const names: string[] = [];
  const positional = sql.replace(/:id\b/g, () => {
    names.push('id');
    return '?';
  });
  const rows = await executeBound<{
    kind: LinkKind;
    value: string;
    customer_id: string;
    first_seen: Date | null;
    last_seen: Date | null;
  }>(em, {
    sql: positional,
    values: names.map(() => customerId),
  });
  return rows.map((r) => {
    const evidence = {
      kind: r.kind,
      value_masked: mask(r.kind, r.value),
      first_seen: r.first_seen ? new Date(r.first_seen).toISOString() : null,
      last_seen: r.last_seen ? new Date(r.last_seen).toISOString() : null,
    };
    return { customer_id: r.customer_id, ...evidence, evidence };
  });
}
