import type { PostingStatementPart } from '../ledger/posting';
import { dec } from '../../platform/decimal';
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
 * One close counted toward the account's active bonuses, as a part of the close's own statement
 * (PostingStatementPart of `order_close`), so counting costs the close no round trip. Before the
 * booking (`before`: it reads the close's `lo` and `la`) it locks the account's active bonuses
 * (oldest first, after the close's lock of the account row), and only when there is one reads
 * how long the closed order was held and the volume of the opposite positions in its symbol
 * whose life overlapped its own, and decides what each bonus wants released. Once the order is
 * closed (`ctes`: they read `o` and `e`) it records the order's turnover row per bonus (an order
 * counts once: a row exists already, and the bonus is not advanced again), advances each bonus
 * with its release, and writes `bonus.progress`, then `bonus.released` and `bonus.completed`
 * where they apply, after the close's `order.closed`.
 *
 * Counted lots: 0 below the programme's min_hold_seconds, else the volume less the hedged
 * volume, never below 0. Release: the unreleased rest once the target is reached; per lot,
 * amount / lots required per counted lot (rounded down to the cent); never more than the
 * account's credit as the locked row holds it, the older bonuses served first (what each one
 * released lowers what the next finds). It answers, as a json array of `{id, release}`, the
 * bonuses that release something: the hook books each release's `bonus_release` pair
 * (RELEASE_FROM_CREDIT, RELEASE_TO_BALANCE) after it, in the same transaction. A close that
 * releases nothing (TURNOVER_RELEASES_NOTHING) needs no transaction: the guarded close statement
 * keeps this part and books it alone.
 *
 * The hedged volume is read as two sums, the open positions and the closed ones whose close
 * came after this order opened, each a range of the (account, status, closed_at) index (orders
 * are `open` or `closed`). The statement sees the orders as of its start: the closed order is
 * still open there, and its own side is never hedged, so it never counts against itself. Each
 * event insert reads the previous one's rows in a one-time filter, so they are written in that
 * order.
 */
export const TURNOVER_AT_CLOSE: PostingStatementPart & { before: string } = {
  before: `turnover_bonus as (
  select b.id, b.amount, b.released, b.lots_required, b.lots_done, b.created_at, p.release_mode, p.min_hold_seconds
    from bonuses b join bonus_programs p on p.id = b.program_id join la on b.account_id = la.id
   where la.credit > 0 and b.status = 'active'
   order by b.created_at, b.id
     for update of b
), turnover_order as (
  select lo.volume, extract(epoch from (lo.closed_at - lo.created_at)) as held_seconds,
         (select coalesce(sum(x.volume), 0) from orders x
           where x.account_id = lo.account_id and x.status = 'open' and x.symbol = lo.symbol and x.cmd <> lo.cmd
             and x.created_at < lo.closed_at)
         + (select coalesce(sum(x.volume), 0) from orders x
             where x.account_id = lo.account_id and x.status = 'closed' and x.closed_at > lo.created_at
               and x.symbol = lo.symbol and x.cmd <> lo.cmd and x.ticket <> lo.ticket and x.created_at < lo.closed_at) as hedged
    from lo where exists (select 1 from turnover_bonus)
), turnover_counted as (
  select b.*, case when t.held_seconds >= b.min_hold_seconds then round(greatest(t.volume - t.hedged, 0), 2) else 0 end as counted
    from turnover_bonus b cross join turnover_order t
), turnover_wanted as (
  select b.id, b.created_at, b.counted, b.lots_done + b.counted as lots_after, b.lots_done + b.counted >= b.lots_required as done,
         greatest(case when b.lots_done + b.counted >= b.lots_required then b.amount - b.released
                       when b.release_mode = 'per_lot'
                         then least(trunc(b.counted * b.amount / nullif(b.lots_required, 0), 2), b.amount - b.released)
                       else 0 end, 0) as wanted
    from turnover_counted b
   where b.counted > 0
)`,
  ctes: `turnover_row as (
  insert into bonus_turnover (id, created_at, updated_at, bonus_id, ticket, lots)
  select gen_random_uuid(), now(), now(), b.id, o.ticket, b.counted from turnover_counted b cross join o
  on conflict (bonus_id, ticket) do nothing
  returning bonus_id
), turnover_release as (
  select w.*,
         least(sum(w.wanted) over k, greatest(la.credit, 0)) - least(sum(w.wanted) over k - w.wanted, greatest(la.credit, 0)) as release
    from turnover_wanted w join turnover_row t on t.bonus_id = w.id cross join la
  window k as (order by w.created_at, w.id rows between unbounded preceding and current row)
), turnover_bonus_after as (
  update bonuses x set lots_done = r.lots_after, released = x.released + r.release,
         status = case when r.done then 'completed' else x.status end, end_reason = null, updated_at = now()
    from turnover_release r where x.id = r.id
  returning x.*, r.counted, r.release, r.done
), turnover_progress as (
  ${bonusEventSql('bonus.progress', `'lots_counted', u.counted::numeric(20,2)::text`, 'turnover_bonus_after u where (select count(*) from e) >= 0')}
), turnover_released as (
  ${bonusEventSql('bonus.released', `'released_now', u.release::numeric(38,2)::text`, 'turnover_bonus_after u where (select count(*) from turnover_progress) >= 0 and u.release > 0')}
), turnover_completed as (
  ${bonusEventSql('bonus.completed', '', 'turnover_bonus_after u where (select count(*) from turnover_released) >= 0 and u.done')}
)`,
  answer: `select coalesce(json_agg(json_build_object('id', u.id, 'release', u.release::numeric(38,2)::text) order by u.created_at, u.id), '[]'::json)
  from turnover_bonus_after u where (select count(*) from turnover_completed) >= 0 and u.release > 0`,
  // An account without credit holds no active bonus.
  applies: (account) => dec(account.credit).gt(0),
};

/**
 * Over TURNOVER_AT_CLOSE's `before` CTEs: the close releases no credit (no bonus wants a
 * release; with credit on the locked row, one that wants some gets some), so the hook's `after`
 * has nothing to book. A wanted release of an order counted already holds the close too, which
 * is only ever safe: the transaction books what the part decides.
 */
export const TURNOVER_RELEASES_NOTHING = 'not exists (select 1 from turnover_wanted where wanted > 0)';

/**
 * The same count as a statement of its own, after the close, in its transaction: for a close
 * whose statement left the part out (the account had no credit when the close read it, and
 * has some under the lock). It offers the part the names the close's statement would: the
 * closed order (as `lo`, with its close's time, and as `o`), the locked account and an `e`
 * with nothing left to follow. The closed order reads as closed here and is left out of the
 * hedged sums by its ticket.
 */
export const TURNOVER_AFTER_CLOSE = namedStatement<{ account_id: string; ticket: string }>(
  `with lo as (
  select account_id, ticket, symbol, cmd, volume, created_at, closed_at from orders
   where ticket = :ticket::bigint and status = 'closed' and account_id = :account_id::uuid
), la as (
  select id, credit from accounts where id = :account_id::uuid
), o as (
  select * from lo
), e as (
  select 1
),
${TURNOVER_AT_CLOSE.before},
${TURNOVER_AT_CLOSE.ctes}
select (${TURNOVER_AT_CLOSE.answer}) as releases`,
);
