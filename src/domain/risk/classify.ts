import type { Statement } from '../../platform/named-sql';
import type { Conditions, RiskRuleInput, Thresholds } from './rule-input';

/**
 * Classification in SQL. Per account: the closed orders of the window
 * (closed_at in [window_start, window_end)), of the symbols the conditions name, aggregated by
 * Postgres into trades, wins, gross profit and loss and the average hold time; then each
 * trading account the conditions admit gets its class: `unclassified` below
 * min_trades_to_classify, else `toxic` if it meets every toxic threshold, else `watchlist` if
 * every watchlist threshold, else `normal`. No order ever reaches Node: the preview reads
 * four counts, and an apply run inserts its per-account rows with INSERT ... SELECT, so a
 * worker's memory does not grow with the number of orders or accounts.
 *
 * The text is built from fixed fragments only; every value is a bound parameter (lists as one
 * array literal: the driver layer would spread a JS array into a list of placeholders, and a
 * plain `= any(array)` keeps the plan parallel where a subquery over a JSON list did not).
 */
export interface Window {
  start: Date;
  end: Date;
}

/** A Postgres array literal of text values, every element quoted and escaped; bound as one parameter. */
export function arrayLiteral(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replace(/[\\"]/g, (ch) => `\\${ch}`)}"`).join(',')}}`;
}

/**
 * Values collected in the order their `?` are written. Not `namedStatement`: that compiles one
 * fixed text, while this text depends on which conditions and thresholds a rule sets.
 */
class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return '?';
  }
}

function meets(t: Thresholds, days: number, p: Params): string {
  const parts: string[] = [];
  if (t.max_avg_hold_seconds !== undefined) parts.push(`s.avg_hold_seconds <= ${p.add(String(t.max_avg_hold_seconds))}::numeric`);
  if (t.min_win_rate !== undefined) parts.push(`s.wins >= ${p.add(String(t.min_win_rate))}::numeric * s.trades`);
  if (t.min_profit_factor !== undefined) {
    // No loss at all: an unbounded factor if anything was won, 0 if nothing was.
    const zero = `(case when s.gross_loss = 0 then s.gross_profit > 0 or ${p.add(String(t.min_profit_factor))}::numeric = 0 `;
    parts.push(`${zero}else s.gross_profit >= ${p.add(String(t.min_profit_factor))}::numeric * s.gross_loss end)`);
  }
  if (t.min_trades_per_day !== undefined)
    parts.push(`s.trades >= ${p.add(String(t.min_trades_per_day))}::numeric * ${p.add(days)}::int`);
  return parts.length ? parts.join(' and ') : 'true';
}

function accountFilter(c: Conditions, p: Params): string {
  let where = `a.kind <> 'wallet'`;
  if (c.kinds) where += ` and a.kind = any(${p.add(arrayLiteral(c.kinds))}::text[])`;
  if (c.group_ids) where += ` and a.group_id = any(${p.add(arrayLiteral(c.group_ids))}::uuid[])`;
  return where;
}

/**
 * `classed(account_id, login, customer_id, trades, risk_class)`, as CTEs ending in `classed`;
 * the caller appends what it selects from it. The statistics are exactly the bench baseline's
 * aggregate (`statsQuery`), over every order of the window; the admitted accounts are joined
 * to its (one row per account) result. Joining the accounts to the orders first, to aggregate
 * only theirs, adds a join per order that saves nothing when the conditions admit most
 * accounts, and a plan reading a shared CTE cannot run in parallel, so neither is done. Parameters are added in text order.
 */
function classedCtes(input: RiskRuleInput, window: Window, p: Params): string {
  const stats = statsSelect(input.conditions, window, p);
  const minTrades = p.add(input.min_trades_to_classify);
  const toxic = meets(input.toxic, input.rolling_window_days, p);
  const watch = meets(input.watchlist, input.rolling_window_days, p);
  const accounts = accountFilter(input.conditions, p);
  return `with s as (${stats}
), classed as (
  select a.id as account_id, a.login, a.customer_id, coalesce(s.trades, 0) as trades,
    case when coalesce(s.trades, 0) < ${minTrades}::int then 'unclassified'
         when ${toxic} then 'toxic'
         when ${watch} then 'watchlist'
         else 'normal' end as risk_class
  from accounts a left join s on s.account_id = a.id
  where ${accounts}
)`;
}

/** The per-account statistics of the window: one GROUP BY over the closed orders (of the symbols, when named). */
function statsSelect(c: Conditions, window: Window, p: Params): string {
  let where = `o.status = 'closed' and o.closed_at >= ${p.add(window.start)}::timestamptz and o.closed_at < ${p.add(window.end)}::timestamptz`;
  if (c.symbols) where += ` and o.symbol = any(${p.add(arrayLiteral(c.symbols))}::text[])`;
  return `
  select o.account_id,
    count(*)::int as trades,
    count(*) filter (where o.profit > 0)::int as wins,
    coalesce(sum(o.profit) filter (where o.profit > 0), 0) as gross_profit,
    coalesce(-sum(o.profit) filter (where o.profit < 0), 0) as gross_loss,
    avg(extract(epoch from (o.closed_at - o.created_at))) as avg_hold_seconds
  from orders o
  where ${where}
  group by o.account_id`;
}

/** Counts per class and the accounts evaluated: what a preview answers. */
export function classCountsQuery(input: RiskRuleInput, window: Window): Statement {
  const p = new Params();
  const ctes = classedCtes(input, window, p);
  return { sql: `${ctes}\nselect risk_class, count(*)::int as n from classed group by risk_class`, values: p.values };
}

/** The classification of every account, for an apply run to insert from (`insert into ... select ... from classed`). */
export function classedStatement(input: RiskRuleInput, window: Window, tail: (p: Params) => string): Statement {
  const p = new Params();
  const ctes = classedCtes(input, window, p);
  return { sql: `${ctes}\n${tail(p)}`, values: p.values };
}

/**
 * The per-account statistics alone (trades, wins, win rate, profit factor, average hold,
 * trades per day), for every account with closed orders in the window: the bench's baseline,
 * the single aggregate a DBA would write, run straight on Postgres.
 */
export function statsQuery(input: RiskRuleInput, window: Window): Statement {
  const p = new Params();
  // Parameters are numbered in text order: the select list comes before the subquery.
  const days = p.add(input.rolling_window_days);
  const stats = statsSelect(input.conditions, window, p);
  return {
    sql: `select s.account_id, s.trades, s.wins, s.wins::numeric / s.trades as win_rate,
       case when s.gross_loss = 0 then null else s.gross_profit / s.gross_loss end as profit_factor,
       s.avg_hold_seconds, s.trades::numeric / ${days}::int as trades_per_day
  from (${stats}) s`,
    values: p.values,
  };
}

export type { Params };
