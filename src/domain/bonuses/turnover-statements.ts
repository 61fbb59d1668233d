import { namedStatement } from '../../platform/named-sql';
import { eventInsertSql } from '../events/outbox';

const ISO = (column: string) =>
  `case when ${column} is null then null else to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') end`;

/** The bonus view (bonuses.ts's BonusSchema) of the updated row `u`, with `extra` pairs after it, as JSON. */
function bonusViewJson(extra: string): string {
  return `json_build_object('id', u.id, 'program_id', u.program_id, 'customer_id', u.customer_id, 'login', u.login,
    'amount', u.amount::numeric(38,2)::text, 'released', u.released::numeric(38,2)::text,
    'lots_required', u.lots_required::numeric(38,2)::text, 'lots_done', u.lots_done::numeric(38,2)::text,
    'status', u.status, 'expires_at', ${ISO('u.expires_at')},
    'source', json_build_object('type', u.source_type, 'id', u.source_id), 'end_reason', u.end_reason,
    'created_at', ${ISO('u.created_at')}${extra ? `, ${extra}` : ''})`;
}

const bonusEventSql = (type: 'bonus.progress' | 'bonus.released' | 'bonus.completed', extra: string, from: string) =>
  eventInsertSql({
    type,
    aggregateType: 'bonus',
    aggregateId: 'u.id::text',
    customerId: 'u.customer_id',
    data: bonusViewJson(extra),
    at: 'now()',
    from,
  });

/**
 * One close counted toward the account's active bonuses, as one statement: it locks the bonuses
 * (oldest first; the close already holds the account row), reads the closed order's volume, how
 * long it was held and the volume of the opposite positions in its symbol whose life overlapped
 * its own, records the order's turnover row per bonus (an order counts once: a row exists
 * already, and the bonus is not advanced again), decides each bonus's release and advances it,
 * and writes `bonus.progress`, then `bonus.released` and `bonus.completed` where they apply.
 *
 * Counted lots: 0 below the programme's min_hold_seconds, else the volume less the hedged
 * volume, never below 0. Release: the unreleased rest once the target is reached; per lot,
 * amount / lots required per counted lot (rounded down to the cent); never more than the
 * account's credit, the older bonuses served first (what each one released lowers what the
 * next finds). It answers the bonuses that release something: the caller books each release's
 * `bonus_release` pair (RELEASE_FROM_CREDIT, RELEASE_TO_BALANCE) in the same transaction.
 *
 * The hedged volume is read as two sums, the open positions and the closed ones whose close
 * came after this order opened, each a range of the (account, status, closed_at) index (orders
 * are `open` or `closed`) instead of one scan over every order the account ever had. Each event insert reads the
 * previous one's rows in a one-time filter, so the three are written in that order.
 */
export const COUNT_CLOSE = namedStatement<{ account_id: string; ticket: string }>(
  `with o as (
  select o.volume, extract(epoch from (o.closed_at - o.created_at)) as held_seconds,
         (select coalesce(sum(x.volume), 0) from orders x
           where x.account_id = o.account_id and x.status = 'open' and x.symbol = o.symbol and x.cmd <> o.cmd
             and x.created_at < o.closed_at)
         + (select coalesce(sum(x.volume), 0) from orders x
             where x.account_id = o.account_id and x.status = 'closed' and x.closed_at > o.created_at
               and x.symbol = o.symbol and x.cmd <> o.cmd and x.ticket <> o.ticket and x.created_at < o.closed_at) as hedged
    from orders o where o.ticket = :ticket::bigint and o.status = 'closed' and o.account_id = :account_id::uuid
), b as (
  select b.id, b.amount, b.released, b.lots_required, b.lots_done, b.created_at, p.release_mode,
         case when o.held_seconds >= p.min_hold_seconds then round(greatest(o.volume - o.hedged, 0), 2) else 0 end as counted
    from bonuses b join bonus_programs p on p.id = b.program_id cross join o
   where b.account_id = :account_id::uuid and b.status = 'active'
   order by b.created_at, b.id
     for update of b
), t as (
  insert into bonus_turnover (id, created_at, updated_at, bonus_id, ticket, lots)
  select gen_random_uuid(), now(), now(), b.id, :ticket::bigint, b.counted from b
  on conflict (bonus_id, ticket) do nothing
  returning bonus_id
), w as (
  select b.id, b.created_at, b.counted, b.lots_done + b.counted as lots_after, b.lots_done + b.counted >= b.lots_required as done,
         greatest(case when b.lots_done + b.counted >= b.lots_required then b.amount - b.released
                       when b.release_mode = 'per_lot'
                         then least(trunc(b.counted * b.amount / nullif(b.lots_required, 0), 2), b.amount - b.released)
                       else 0 end, 0) as wanted
    from b join t on t.bonus_id = b.id
   where b.counted > 0
), r as (
  select w.*,
         least(sum(w.wanted) over k, c.cap) - least(sum(w.wanted) over k - w.wanted, c.cap) as release
    from w cross join (select greatest(credit, 0) as cap from accounts where id = :account_id::uuid) c
  window k as (order by w.created_at, w.id rows between unbounded preceding and current row)
), u as (
  update bonuses x set lots_done = r.lots_after, released = x.released + r.release,
         status = case when r.done then 'completed' else x.status end, end_reason = null, updated_at = now()
    from r where x.id = r.id
  returning x.*, r.counted, r.release, r.done
), ep as (
  ${bonusEventSql('bonus.progress', `'lots_counted', u.counted::numeric(20,2)::text`, 'u')}
), er as (
  ${bonusEventSql('bonus.released', `'released_now', u.release::numeric(38,2)::text`, 'u where (select count(*) from ep) >= 0 and u.release > 0')}
), ec as (
  ${bonusEventSql('bonus.completed', '', 'u where (select count(*) from er) >= 0 and u.done')}
)
select u.id, u.release::numeric(38,2)::text as release from u
 where (select count(*) from ec) >= 0 and u.release > 0
 order by u.created_at, u.id`,
);
