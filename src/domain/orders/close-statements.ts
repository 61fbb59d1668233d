import { namedStatement, type Statement } from '../../platform/named-sql';
import { eventInsertSql } from '../events/outbox';
import { ledgerInsertSql } from '../ledger/ledger';
import {
  balanceUpdateSql,
  postingIdleGuards,
  postingStatementParts,
  referredSql,
  type AccountAsRead,
  type InstalledIdleGuard,
  type InstalledStatementPart,
  type PostedAccount,
} from '../ledger/posting';
import { orderCloseSql } from './orders.queries';

/*
 * The closing statement of an open order, in its forms: plain, with the posting hooks'
 * statement parts, and guarded (booking only while no hook has work its part cannot do).
 * close-order.ts prices a close and chooses which form to run.
 */

/** What the closing statement answers: whether it closed the order, and the order's booked commission and swap after it. */
export interface ClosedRow {
  booked: number;
  commission: string;
  swap: string;
  /** The account as the close left it (null when nothing was booked). */
  account: PostedAccount | null;
  /** What the hooks' statement parts answered, by hook name (null when no hook adds one). */
  answers: Record<string, unknown> | null;
  /**
   * True when a guarded statement (guardedCloseStatement) found the open order's account, under
   * the lock, with work for a hook, and so changed nothing; false otherwise.
   */
  held: boolean;
}

/** What the closing statement writes, by name. */
export interface CloseParams {
  ticket: string;
  closed_at: Date;
  /** Decimal text. */
  close_price: string;
  /** In the account currency, two decimals: added to the balance and booked in the ledger. */
  profit: string;
  /** The closing commission as it hits the balance (negative or "0.00"), booked as its own row when not zero. */
  commission: string;
  reason: string;
  /** The order.closed event's data (the closed order's view), as JSON text. */
  event: string;
  /** The bulk close run whose item this close decides, or null for a single close. */
  bulk_close_run_id: string | null;
}

/**
 * The first CTEs of a guarded statement, or of one whose parts run CTEs before the booking: the
 * open order locked (first, as every close locks it; with the close's time as `closed_at`), then
 * its account (id, credit), only while `conditions` hold (the idle guards that stand alone: a
 * row lock re-reads the row and re-checks them when it changed since the statement's start);
 * then the parts' `before` CTEs, which read both. `o` then closes the order only when the
 * account was locked so, and while the guards that ride with their parts hold.
 */
const lockCtes = (conditions: readonly string[], before: readonly string[]) => `lo as (
  select account_id, ticket, symbol, cmd, volume, created_at, :closed_at::timestamptz as closed_at
    from orders where ticket = :ticket and status = 'open' for update
), la as (
  select a.id, a.credit from accounts a
   where a.id = (select account_id from lo)${conditions.map((c) => `\n     and (${c})`).join('')}
     for update of a
)${before.map((b) => `,\n${b}`).join('')}, `;

/** A guarded statement that found the order open and booked nothing: a hook has work its statement cannot do. */
const HELD = 'exists (select 1 from lo) and not exists (select 1 from o)';

/** What a statement's first CTEs lock and check before the booking (lockCtes), or null for a close that needs none. */
interface Locking {
  conditions: readonly string[];
  before: readonly string[];
  /** Conditions on the parts' `before` CTEs, under which `o` closes. */
  closeWhen: readonly string[];
}

const closeCtes = (locking: Locking | null) => `
with ${locking ? lockCtes(locking.conditions, locking.before) : ''}o as (
  ${orderCloseSql(locking ? ['exists (select 1 from la)', ...locking.closeWhen.map((c) => `(${c})`)].join(' and ') : undefined)}
), a as (
  ${balanceUpdateSql({
    delta: ':profit::numeric + :commission::numeric',
    at: 'now()',
    where: 'id = (select account_id from o)',
    returning: 'id, balance, credit, customer_id, login, kind, currency, reserved, group_id',
  })}
), l as (
  ${ledgerInsertSql([
    {
      id: 'gen_random_uuid()',
      bookedAt: 'now()',
      accountId: 'a.id',
      kind: 'trade_profit',
      amount: ':profit::numeric',
      balanceAfter: 'a.balance - :commission::numeric',
      referenceType: 'order',
      referenceId: ':ticket',
      comment: ':comment',
      from: 'a',
    },
    {
      id: 'gen_random_uuid()',
      bookedAt: 'now()',
      accountId: 'a.id',
      kind: 'commission',
      amount: ':commission::numeric',
      balanceAfter: 'a.balance',
      referenceType: 'order',
      referenceId: ':ticket',
      comment: "'Commission on the close of order ' || :ticket::text",
      from: 'a where :commission::numeric <> 0',
    },
  ])}
), s as (
  select (coalesce(sum(amount) filter (where kind = 'commission'), 0) + :commission::numeric)::numeric(38,2)::text as commission,
         coalesce(sum(amount) filter (where kind = 'swap'), 0)::numeric(38,2)::text as swap
    from ledger_entries
   where reference_type = 'order' and reference_id = :ticket::text and kind in ('commission', 'swap')
), e as (
  ${eventInsertSql({
    type: 'order.closed',
    aggregateType: 'order',
    aggregateId: ':ticket',
    customerId: 'a.customer_id',
    // The view's text with its last two fields appended, so the event keeps the REST order.
    data: `(left(:event::text, -1) || ',"commission":' || to_json(s.commission)::text || ',"swap":' || to_json(s.swap)::text || '}')::json`,
    at: 'now()',
    from: 'a cross join s',
  })}
)`;

type CloseBinding = CloseParams & { comment: string };

/** The order's commission and swap read as of the statement's start, plus this close's commission. */
const closed = (
  parts: readonly InstalledStatementPart[],
  guarded: boolean,
) => `select (select count(*) from o)::int as booked, s.commission, s.swap,
  (select json_build_object('id', id, 'login', login::text, 'customerId', customer_id, 'kind', kind, 'currency', currency,
          'balance', balance::text, 'credit', credit::text, 'reserved', reserved::text,
          'referred', ${referredSql('a.customer_id')}) from a) as account,
  ${parts.length === 0 ? 'null::json' : `json_build_object(${parts.map((p) => `'${p.hook}', (${p.answer})`).join(', ')})`} as answers,
  ${guarded ? HELD : 'false'} as held
  from s`;

const withParts = (parts: readonly InstalledStatementPart[]) => parts.map((p) => `,\n${p.ctes}`).join('');

/**
 * The single close's statement and the bulk close's (which also decides the run's item), with
 * the parts given; guarded by `guards` when given (a held statement leaves the item pending).
 */
function closeStatements(parts: readonly InstalledStatementPart[], guards: readonly InstalledIdleGuard[] | null) {
  const inStatement = new Set(parts.map((p) => p.hook));
  const riding = (g: InstalledIdleGuard) => g.withPart !== undefined && inStatement.has(g.hook);
  const before = parts.flatMap((p) => (p.before ? [p.before] : []));
  const locking: Locking | null =
    guards === null && before.length === 0
      ? null
      : {
          conditions: (guards ?? []).filter((g) => !riding(g)).map((g) => g.sql),
          before,
          closeWhen: (guards ?? []).filter(riding).map((g) => g.withPart!),
        };
  const ctes = closeCtes(locking);
  const answer = closed(parts, guards !== null);
  return {
    single: namedStatement<CloseBinding>(`${ctes}${withParts(parts)}
${answer}`),
    bulk: namedStatement<CloseBinding>(`${ctes}, i as (
  update bulk_close_items set status = 'closed', reason = null, finished_at = now()
  where run_id = :bulk_close_run_id and ticket = :ticket and status = 'pending'${guards ? `\n    and not (${HELD})` : ''}
  returning 1
)${withParts(parts)}
${answer}`),
  };
}

/** The statements by the parts they hold (hook names) and whether guarded, for the parts and guards installed last. */
let built:
  | {
      parts: readonly InstalledStatementPart[];
      guards: readonly InstalledIdleGuard[] | null;
      byHooks: Map<string, ReturnType<typeof closeStatements>>;
    }
  | undefined;

function statementOf(
  params: CloseParams,
  parts: readonly InstalledStatementPart[],
  guards: readonly InstalledIdleGuard[] | null,
) {
  const key = `${guards ? 'guarded:' : ''}${parts.map((p) => p.hook).join(',')}`;
  let statements = built!.byHooks.get(key);
  if (!statements) built!.byHooks.set(key, (statements = closeStatements(parts, guards)));
  const statement = params.bulk_close_run_id === null ? statements.single : statements.bulk;
  return statement.bind({ ...params, comment: `Close of order ${params.ticket}` });
}

function installedForClose() {
  const parts = postingStatementParts('order_close');
  const guards = postingIdleGuards('order_close');
  if (built?.parts !== parts || built.guards !== guards) built = { parts, guards, byHooks: new Map() };
  return { parts, guards };
}

/**
 * The one statement that closes an order if it is still open, books the profit and the
 * closing commission to the balance, appends their ledger rows (`trade_profit`, then
 * `commission` when not zero, both referencing the order) and the order.closed event, and
 * (for a bulk close) decides the run's item; it answers `booked` 1, or 0 when the order was no
 * longer open, with the order's booked commission and swap.
 * closeOrder runs it, and so does the bench's plain-`pg` baseline (bench/bulk-close.bench.ts).
 *
 * The installed `order_close` hooks' statement parts (PostingStatementPart) are folded in, so
 * their work costs the close no round trip; their answers come back as `answers`. A part may
 * read `o` (the closed order: account_id, ticket, symbol, cmd, volume, created_at, closed_at;
 * empty when the order was no longer open), `a` (the account row as the booking left it,
 * locked: id, balance, credit, customer_id, login, kind, currency, reserved, group_id), `e` (the
 * order.closed event's insert: a part's events read it first, to follow that event) and, in its
 * answer, `s` (the order's commission and swap with this close's, as text). A part's `before`
 * CTEs run ahead of the booking and may read `lo` (the order as still open, locked: account_id,
 * ticket, symbol, cmd, volume, created_at, and closed_at, this close's time) and `la` (the
 * account row locked: id, credit); its `ctes` may read them too. It sees the other tables as of
 * the statement's start, so what it must read current it reads through `a` or `la`, or under a
 * row lock of its own, taken after the account's. With `holder` (the account as the caller
 * read it), the parts that do not apply to it are left out.
 */
export function closeStatement(params: CloseParams, holder?: AccountAsRead): Statement {
  const { parts } = installedForClose();
  return statementOf(params, holder ? parts.filter((p) => p.applies(holder)) : parts, null);
}

/**
 * closeStatement for a close none of the `after` hooks has work for: the same statement, but it
 * books only while every hook's idle guard (PostingIdleGuard) holds for the account under its
 * lock, and otherwise changes nothing and answers `held`. A guarded hook's part is left out (a
 * guard that holds says it has nothing to do), unless its guard rides with it (`withPart`: the
 * part's work is then booked by this statement, and only its `after` would need the
 * transaction). Null when the close must run with its hooks: a hook has no guard, or one
 * expects work for `holder` (the account as the caller read it).
 */
export function guardedCloseStatement(params: CloseParams, holder?: AccountAsRead): Statement | null {
  const { parts, guards } = installedForClose();
  if (guards === null) return null;
  if (holder && guards.some((g) => g.likely && !g.likely(holder))) return null;
  const standing = new Set(guards.filter((g) => g.withPart === undefined).map((g) => g.hook));
  const rest = parts.filter((p) => !standing.has(p.hook) && (!holder || p.applies(holder)));
  return statementOf(params, rest, guards);
}
