import { scopeSql, type scopeParams } from '../../platform/customer-scope';
import { namedStatement, type Statement } from '../../platform/named-sql';
import type { Column } from './report-document';

/** A time as ISO 8601 UTC text, formatted by Postgres: the report writers hand it on as it is. */
const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * An order's commission and swap: the sums of the ledger rows of those kinds that reference
 * it (reference_type `order`, reference_id its ticket, as its trade_profit row does), signed
 * as they hit the balance, booked before `:until`.
 */
const ORDER_CHARGES = `left join lateral (
    select coalesce(sum(l.amount) filter (where l.kind = 'commission'), 0.00)::text as commission,
           coalesce(sum(l.amount) filter (where l.kind = 'swap'), 0.00)::text as swap
      from ledger_entries l
     where l.reference_type = 'order' and l.reference_id = o.ticket::text
       and l.kind in ('commission', 'swap') and l.created_at < :until
  ) charges on true`;

const ORDER_COLUMNS = `o.ticket::text as ticket, o.symbol, o.cmd, trim_scale(o.volume)::text as volume,
  ${iso('o.created_at')} as open_time, trim_scale(o.open_price)::text as open_price`;

// --- the report record and its file -----------------------------------------------------

export const ACCOUNT_BY_LOGIN = namedStatement<{ login: string }>(
  `select id, login::text as login, currency, customer_id, group_id from accounts where login = :login::bigint`,
);

export const GROUP_EXISTS = namedStatement<{ group_id: string }>(
  `select 1 as found from trading_groups where id = :group_id::uuid`,
);

/** Claims the report for a build: queued, or running after a crash or a failed attempt; never a finished one. */
export const START_BUILD = namedStatement<{ id: string }>(
  `update reports set status = 'running', started_at = now(), updated_at = now(), error = null
    where id = :id and status in ('queued', 'running')
   returning type, format, params, scope`,
);

export const DELETE_CHUNKS = namedStatement<{ report_id: string }>(`delete from report_chunks where report_id = :report_id`);

export const INSERT_CHUNK = namedStatement<{ report_id: string; seq: number; data: Buffer }>(
  `insert into report_chunks (report_id, seq, data) values (:report_id, :seq, :data)`,
);

/** The one statement that makes a file downloadable, run after its last chunk is stored. */
export const COMPLETE_BUILD = namedStatement<{ id: string; rows: number; bytes: number }>(
  `update reports set status = 'completed', rows = :rows, bytes = :bytes, finished_at = now(), updated_at = now()
    where id = :id and status = 'running'`,
);

export const FAIL_BUILD = namedStatement<{ id: string; error: string }>(
  `update reports set status = 'failed', error = :error, finished_at = now(), updated_at = now()
    where id = :id and status in ('queued', 'running')`,
);

/** Reports not finished and untouched since `:before`: candidates for the stuck-report sweep, oldest first. */
export const UNFINISHED_REPORTS = namedStatement<{ before: Date; started_before: Date; limit: number }>(
  `select id, status, status = 'running' and started_at < :started_before as overdue, requeued_at is not null as requeued
     from reports
    where status in ('queued', 'running') and updated_at < :before
    order by updated_at limit :limit`,
);

/** Queues a report's build again after its job was lost: once per report, and only while it is still unfinished and untouched. */
export const MARK_REQUEUED = namedStatement<{ id: string; before: Date }>(
  `update reports set status = 'queued', requeued_at = now(), updated_at = now()
    where id = :id and status in ('queued', 'running') and requeued_at is null and updated_at < :before
   returning id`,
);

/** Undoes MARK_REQUEUED when the job could not be added after all (Redis went away meanwhile). */
export const UNMARK_REQUEUED = namedStatement<{ id: string }>(
  `update reports set requeued_at = null where id = :id and status = 'queued'`,
);

/** Fails a stuck report, unless its build moved on since the sweep read it. */
export const FAIL_STUCK = namedStatement<{ id: string; before: Date; error: string }>(
  `update reports set status = 'failed', error = :error, finished_at = now(), updated_at = now()
    where id = :id and status in ('queued', 'running') and updated_at < :before
   returning id`,
);

export const READ_CHUNK = namedStatement<{ report_id: string; seq: number }>(
  `select data from report_chunks where report_id = :report_id and seq = :seq`,
);

export const BROKER_NAME = namedStatement<Record<string, never>>(`select broker_name from broker_settings where id = 1`);

/** The report's recorded scope, bound for the scopeSql of the statements that read many customers' rows. */
type ScopeParams = ReturnType<typeof scopeParams>;

// --- account_statement -------------------------------------------------------------------

/**
 * The balance before the period and at its end, as sums of the ledger's balance rows: what the
 * balance column is kept equal to (credit rows are the other bucket, not the statement's balance).
 */
export const STATEMENT_BALANCES = namedStatement<{ account_id: string; start: Date; until: Date }>(
  `select coalesce(sum(amount) filter (where created_at < :start), 0.00)::text as opening,
          coalesce(sum(amount), 0.00)::text as closing
     from ledger_entries where account_id = :account_id and bucket = 'balance' and created_at < :until`,
);

/** In booking order: the column `seq` (a bare `seq` would name the text it is answered as, and 10 would sort before 9). */
export const STATEMENT_LEDGER = namedStatement<{ account_id: string; start: Date; until: Date }>(
  `select seq::text as seq, ${iso('created_at')} as time, kind, amount::text as amount,
          balance_after::text as balance_after, reference_type, reference_id
     from ledger_entries l
    where account_id = :account_id and bucket = 'balance' and created_at >= :start and created_at < :until
    order by l.seq`,
);

export const STATEMENT_CLOSED_ORDERS = namedStatement<{ account_id: string; start: Date; until: Date }>(
  `select ${ORDER_COLUMNS}, ${iso('o.closed_at')} as close_time, trim_scale(o.close_price)::text as close_price,
          o.profit::text as profit, charges.commission, charges.swap
     from orders o ${ORDER_CHARGES}
    where o.account_id = :account_id and o.status = 'closed' and o.closed_at >= :start and o.closed_at < :until
    order by o.closed_at, o.ticket`,
);

/** Orders open at the period's end: opened before it, and not closed by then. */
export const STATEMENT_OPEN_ORDERS = namedStatement<{ account_id: string; until: Date }>(
  `select ${ORDER_COLUMNS}, o.status, o.contract_size::text as contract_size, charges.commission, charges.swap
     from orders o ${ORDER_CHARGES}
    where o.account_id = :account_id and o.created_at < :until and (o.status = 'open' or o.closed_at >= :until)
    order by o.ticket`,
);

// --- trades ---------------------------------------------------------------------------------

export interface TradesParams {
  start: Date;
  until: Date;
  login: string | null;
  symbol: string | null;
}

export const TRADES = namedStatement<TradesParams & ScopeParams>(
  `select o.login::text as login, ${ORDER_COLUMNS}, ${iso('o.closed_at')} as close_time,
          trim_scale(o.close_price)::text as close_price, o.profit::text as profit,
          charges.commission, charges.swap, o.comment
     from orders o ${ORDER_CHARGES}
    where o.status = 'closed' and o.closed_at >= :start and o.closed_at < :until
      and (:login::bigint is null or o.login = :login::bigint)
      and (:symbol::text is null or o.symbol = :symbol::text)
      and ${scopeSql('(select a.customer_id from accounts a where a.id = o.account_id)')}
    order by o.closed_at, o.ticket`,
);

// --- exposure ------------------------------------------------------------------------------

/** Per symbol and side: volume, units (volume x contract size) and their cost at the opening prices. */
export const EXPOSURE = namedStatement<{ group_id: string | null } & ScopeParams>(
  `select o.symbol, i.base_currency, i.quote_currency,
          coalesce(sum(o.volume) filter (where o.cmd = 0), 0)::text as long_volume,
          coalesce(sum(o.volume) filter (where o.cmd = 1), 0)::text as short_volume,
          coalesce(sum(o.volume * o.contract_size) filter (where o.cmd = 0), 0)::text as long_units,
          coalesce(sum(o.volume * o.contract_size) filter (where o.cmd = 1), 0)::text as short_units,
          coalesce(sum(o.volume * o.contract_size * o.open_price) filter (where o.cmd = 0), 0)::text as long_cost,
          coalesce(sum(o.volume * o.contract_size * o.open_price) filter (where o.cmd = 1), 0)::text as short_cost,
          count(*)::int as open_orders
     from orders o
     join accounts a on a.id = o.account_id
     left join instruments i on i.symbol = o.symbol
    where o.status = 'open' and (:group_id::uuid is null or a.group_id = :group_id::uuid) and ${scopeSql('a.customer_id')}
    group by o.symbol, i.base_currency, i.quote_currency
    order by o.symbol`,
);

// --- deposits_withdrawals ------------------------------------------------------------------

/**
 * Deposits and withdrawals per currency and UTC day, from the ledger: a withdrawal has a
 * ledger row only once it is completed (approved), so pending and rejected ones never count.
 */
export const DEPOSITS_WITHDRAWALS = namedStatement<{ start: Date; until: Date; group_id: string | null } & ScopeParams>(
  `select a.currency, to_char(l.created_at at time zone 'UTC', 'YYYY-MM-DD') as day,
          coalesce(sum(l.amount) filter (where l.kind = 'deposit'), 0.00)::text as deposits,
          count(*) filter (where l.kind = 'deposit')::int as deposit_count,
          coalesce(-sum(l.amount) filter (where l.kind = 'withdrawal'), 0.00)::text as withdrawals,
          count(*) filter (where l.kind = 'withdrawal')::int as withdrawal_count,
          sum(l.amount)::text as net
     from ledger_entries l
     join accounts a on a.id = l.account_id
    where l.kind in ('deposit', 'withdrawal') and l.created_at >= :start and l.created_at < :until
      and (:group_id::uuid is null or a.group_id = :group_id::uuid)
      and ${scopeSql('a.customer_id')}
    group by a.currency, day
    order by a.currency, day`,
);

// --- promotions ------------------------------------------------------------------------------

/**
 * Per promo code (of one campaign, or all): the redemptions of the period and, from the ledger
 * rows of its bonuses booked in the period, the credit granted, the part released to balance,
 * the credit removed (forfeited, expired or cancelled) and the net cost (what became
 * withdrawable money).
 */
export const PROMOTIONS = namedStatement<{ start: Date; until: Date; campaign_id: string | null }>(
  `select c.code, c.campaign_id::text as campaign_id, p.currency,
          (select count(*) from promo_redemptions r
            where r.promo_code_id = c.id and r.created_at >= :start and r.created_at < :until)::int as redemptions,
          coalesce(sum(l.amount) filter (where l.kind = 'credit_in'), 0.00)::text as granted,
          coalesce(sum(l.amount) filter (where l.kind = 'bonus_release' and l.bucket = 'balance'), 0.00)::text as released,
          coalesce(-sum(l.amount) filter (where l.kind = 'credit_out'), 0.00)::text as forfeited,
          coalesce(sum(l.amount) filter (where l.kind = 'bonus_release' and l.bucket = 'balance'), 0.00)::text as net_cost
     from promo_codes c
     join bonus_programs p on p.id = c.bonus_program_id
     left join bonuses b on b.source_type = 'promo' and b.source_id = c.id::text
     left join ledger_entries l on l.reference_type = 'bonus' and l.reference_id = b.id::text
      and l.created_at >= :start and l.created_at < :until
    where (:campaign_id::uuid is null or c.campaign_id = :campaign_id::uuid)
    group by c.id, c.code, c.campaign_id, p.currency
    order by c.code`,
);

// --- daily -----------------------------------------------------------------------------------

export const DAILY_SNAPSHOTS = namedStatement<{ trading_date: string } & ScopeParams>(
  `select s.login::text as login, s.trading_date::text as trading_date, a.currency,
          s.balance::text as balance, s.equity::text as equity, s.margin::text as margin,
          s.free_margin::text as free_margin, s.floating_profit::text as floating_profit, s.movements
     from account_daily_snapshots s
     join accounts a on a.id = s.account_id
    where s.trading_date = :trading_date::date and ${scopeSql('a.customer_id')}
    order by s.login`,
);

// --- partners --------------------------------------------------------------------------------

/**
 * Per partner, level and currency: the rewards of the orders closed in the period, by state.
 * A staff scope keeps the rows of the clients it sees.
 */
export const IB_REWARDS = namedStatement<{ start: Date; until: Date; partner_id: string | null } & ScopeParams>(
  `select p.id::text as partner_id, p.code, a.level, a.currency,
          count(distinct a.ticket)::int as orders, coalesce(sum(a.lots), 0)::text as lots,
          coalesce(sum(a.amount) filter (where a.status = 'paid'), 0.00)::text as paid,
          coalesce(sum(a.amount) filter (where a.status = 'accrued'), 0.00)::text as pending,
          coalesce(sum(a.amount) filter (where a.status = 'on_hold'), 0.00)::text as on_hold,
          coalesce(sum(a.amount) filter (where a.status = 'reversed'), 0.00)::text as reversed,
          count(*) filter (where a.status = 'excluded')::int as excluded
     from ib_accruals a join partners p on p.id = a.partner_id
    where a.closed_at >= :start and a.closed_at < :until
      and (:partner_id::uuid is null or a.partner_id = :partner_id::uuid)
      and ${scopeSql('a.client_customer_id')}
    group by p.id, p.code, a.level, a.currency
    order by p.code, a.level, a.currency`,
);

/**
 * Per partner and level (1: its own clients, 2: the clients of the partners directly below,
 * ...): the clients registered and first-funded in the period, and the lots they closed in it.
 */
export const IB_ACQUISITION = namedStatement<{ start: Date; until: Date; partner_id: string | null } & ScopeParams>(
  `with recursive tree(root, id, depth) as (
     select id, id, 1 from partners where (:partner_id::uuid is null or id = :partner_id::uuid)
     union all
     select t.root, p.id, t.depth + 1 from tree t join partners p on p.parent_partner_id = t.id where t.depth < 10
   )
   select r.id::text as partner_id, r.code, t.depth as level,
          count(*) filter (where c.created_at >= :start and c.created_at < :until)::int as registrations,
          count(*) filter (where c.ftd_at >= :start and c.ftd_at < :until)::int as ftds,
          coalesce(sum((select sum(o.volume) from orders o join accounts x on x.id = o.account_id
                         where x.customer_id = c.id and o.status = 'closed' and o.closed_at >= :start and o.closed_at < :until)), 0)::text as volume
     from tree t join partners r on r.id = t.root join customers c on c.partner_id = t.id
    where ${scopeSql('c.id')}
    group by r.id, r.code, t.depth
    order by r.code, t.depth`,
);

// --- CSV records written by Postgres --------------------------------------------------------

/**
 * A text cell as csvCell writes it: a `'` in front when the text could start a spreadsheet
 * formula (`=`, `+`, `-`, `@`, TAB or CR first, also behind leading spaces: report-document's
 * FORMULA_START), and an empty text as NULL, which COPY writes as an empty field as
 * csv-stringify does (COPY writes an empty string as `""`).
 */
const csvText = (value: string) => `case when ${value} ~ '^ *[-=+@\\t\\r]' then '''' || ${value} else nullif(${value}, '') end`;

const KEY = /^[a-z_][a-z0-9_]*$/;

/**
 * The CSV record of each row of `rows`, as the CSV writer lays it out: the section's key first
 * when the report has several (`section`), then one field per column of the file, `null` where
 * the section has no such column. Text cells are defused in SQL; every other column is written
 * as the statement answers it, so a section read this way answers its numbers and times as
 * the text the writers print (times as `iso()` writes them). JSON is never read this way: the
 * text of a jsonb value is not JSON.stringify's. `rows` is not flattened into the outer select
 * (it ends in ORDER BY), so the records come in its order.
 */
export function csvRecords(rows: Statement, section: string | null, cells: Array<Column | null>): Statement {
  const fields: string[] = [];
  if (section !== null) fields.push(`'${keyOf(section)}'`);
  for (const cell of cells) fields.push(csvField(cell));
  return { sql: `select ${fields.join(', ')} from (${rows.sql}) r`, values: rows.values };
}

function csvField(cell: Column | null): string {
  if (cell === null) return 'null';
  const value = `r."${keyOf(cell.key)}"::text`;
  if (cell.type === 'json') throw new Error(`column ${cell.key}: JSON cells are written by the CSV writer, not by COPY`);
  if (cell.type === 'text') return csvText(value);
  return value;
}

function keyOf(key: string): string {
  if (!KEY.test(key)) throw new Error(`not a column key: ${key}`);
  return key;
}
