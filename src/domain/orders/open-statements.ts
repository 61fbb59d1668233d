import type { AccountKind } from '../../entities/account.entity';
import { namedStatement, type NamedStatement, type Statement } from '../../platform/named-sql';
import { eventInsertSql } from '../events/outbox';
import { ledgerInsertSql } from '../ledger/ledger';
import { scopeParams, scopeSql, type CustomerScope } from '../../platform/customer-scope';
import { ORDER_INSERT_SQL } from './orders.queries';
import { balanceUpdateSql, POSTED_CUSTOMER_COLUMNS, type PostedCustomerColumns } from '../ledger/posting';
import { termsCtes, type TermsRow } from '../prices/pricing-terms';

/**
 * The statements of opening a market order, in the order openMarketOrder sends them inside its
 * transaction (the bench's plain `pg` baseline, bench/orders.bench.ts, sends the same ones):
 * find and lock the account, read its open positions, waiting pending orders and pricing
 * terms, insert the order with its opening commission and its order.opened event. Opening is a
 * hot path: three statements with BEGIN and COMMIT, where the route's account lookup and the
 * unit of work sent eleven (a group with max_exposure adds its lock and its exposure read).
 */

/**
 * The account row, locked for the free-margin check (orders racing for the same margin take
 * turns), with its group's default leverage and limits (`group_*`, read unlocked: staff edits
 * of a group never waited for orders). Found by login for a caller, limited to the caller's
 * own accounts for a customer (`customer_id`; null for staff), so another customer's row is
 * never locked; by id for the engine filling a pending order. The customer's access, email and
 * country (`customer_*`, read unlocked like the group) come with it for the posting hooks, which
 * would otherwise read the customer row in a round trip of their own.
 */
const LOCK_ACCOUNT_COLUMNS = `select a.id, a.login, a.customer_id, a.group_id, a.kind, a.currency, a.balance, a.credit::text as credit, a.reserved::text as reserved, a.leverage,
         a.trading_disabled, a.margin_call_active, g.default_leverage as group_leverage, g.max_open_positions as group_max_open_positions,
         g.max_exposure::text as group_max_exposure, g.net_max_exposure as group_net_max_exposure, g.currency as group_currency,
         ${POSTED_CUSTOMER_COLUMNS}
  from accounts a left join trading_groups g on g.id = a.group_id left join customers c on c.id = a.customer_id`;
const LOCK_ACCOUNT = namedStatement<{ account_id: string }>(`${LOCK_ACCOUNT_COLUMNS} where a.id = :account_id for update of a`);
const LOCK_OWN_ACCOUNT = namedStatement<{
  login: string;
  customer_id: string | null;
  scope_user: string | null;
  scope_teams: string;
}>(`${LOCK_ACCOUNT_COLUMNS} where a.login = :login and ${scopeSql('a.customer_id')} for update of a`);

/**
 * Everything the free-margin check reads besides the quotes, in one statement sent after the
 * lock: a statement that waited for the lock reads other tables as of when it started, and
 * would miss an order a racing open committed meanwhile. In every row: the account's open
 * positions (`open`, decimals as text) and how many pending orders may still become positions
 * (`waiting`). Then the pricing terms (termsCtes, the one reader of them) of the open
 * positions' symbols and of `symbol`, one row each (none when there is none).
 */
let holdingsAndTerms:
  NamedStatement<{ account_id: string; symbol: string; currency: string; group_id: string | null }> | undefined;
const HOLDINGS_AND_TERMS = () =>
  (holdingsAndTerms ??= namedStatement(`
with positions as (
  select symbol, cmd, volume, contract_size, open_price from orders where account_id = :account_id and status = 'open'
), holdings as (
  select coalesce((select json_agg(json_build_object('symbol', symbol, 'cmd', cmd, 'volume', volume::text,
                    'contractSize', contract_size::text, 'openPrice', open_price::text)) from positions), '[]'::json) as open,
         (select count(*) from pending_orders where account_id = :account_id and status in ('pending', 'triggered'))::int as waiting
), wanted as (
  select id, quote_currency from instruments where symbol in (select symbol from positions union select :symbol::text)
), ${termsCtes()}
select holdings.open, holdings.waiting, terms.* from holdings left join terms on true`));

/** A row of LOCK_ACCOUNT and LOCK_OWN_ACCOUNT: what the open reads of the account, its group's default leverage and limits, and its customer. */
export interface LockedAccountRow extends PostedCustomerColumns {
  id: string;
  login: string;
  customer_id: string;
  group_id: string | null;
  kind: AccountKind;
  currency: string;
  /** Decimal text. */
  balance: string;
  /** Decimal text: counts in equity, so in the free margin an open needs. */
  credit: string;
  /** Decimal text. */
  reserved: string;
  leverage: number | null;
  trading_disabled: boolean;
  margin_call_active: boolean;
  group_leverage: number | null;
  group_max_open_positions: number | null;
  /** Decimal text, in the group's currency. */
  group_max_exposure: string | null;
  group_net_max_exposure: boolean | null;
  group_currency: string | null;
}

/** What the opening statement writes, by name. */
export interface OpenParams {
  id: string;
  opened_at: Date;
  account_id: string;
  login: string;
  customer_id: string;
  symbol: string;
  cmd: 0 | 1;
  /** Decimal text. */
  volume: string;
  open_price: string;
  contract_size: string;
  sl: string | null;
  tp: string | null;
  comment: string | null;
  trailing_stop: string | null;
  /** The opening commission as it hits the balance (decimal text, negative or zero): booked when not zero. */
  commission: string;
  /** The order.opened event's data (the order's view) as JSON text; the statement sets its `order` to the ticket drawn. */
  event: string;
}

/**
 * The order, its opening commission (the balance and a `commission` ledger row referencing
 * the order, when not zero) and its order.opened event in one statement: the ticket comes from
 * the sequence, so the event's `order` and the ledger row's reference are set from the
 * inserted row. The account row is already locked (LOCK_ACCOUNT). Answers the inserted row.
 */
const OPEN = namedStatement<OpenParams>(`
with o as (
  ${ORDER_INSERT_SQL}
), c as (
  ${balanceUpdateSql({
    delta: ':commission::numeric',
    at: ':opened_at',
    where: 'id = :account_id::uuid and :commission::numeric <> 0',
    returning: 'id, balance',
  })}
), l as (
  ${ledgerInsertSql([
    {
      id: 'gen_random_uuid()',
      bookedAt: ':opened_at::timestamptz',
      accountId: 'c.id',
      kind: 'commission',
      amount: ':commission::numeric',
      balanceAfter: 'c.balance',
      referenceType: 'order',
      referenceId: 'o.ticket::text',
      comment: "'Commission on the open of order ' || o.ticket",
      from: 'c cross join o',
    },
  ])}
), e as (
  ${eventInsertSql({
    type: 'order.opened',
    aggregateType: 'order',
    aggregateId: 'o.ticket::text',
    customerId: ':customer_id::uuid',
    // The ticket in front of the rest of the view's text, so the event keeps the REST order.
    data: `('{"order":' || o.ticket || ',' || substr(:event::text, 2))::json`,
    at: ':opened_at::timestamptz',
    from: 'o',
  })}
)
select * from o`);

export const openStatements = {
  lockAccount: (accountId: string): Statement => LOCK_ACCOUNT.bind({ account_id: accountId }),
  lockOwnAccount: (login: number | string, scope: CustomerScope): Statement =>
    LOCK_OWN_ACCOUNT.bind({ login: String(login), ...scopeParams(scope) }),
  holdingsAndTerms: (account: { id: string; currency: string; groupId: string | null }, symbol: string): Statement =>
    HOLDINGS_AND_TERMS().bind({ account_id: account.id, currency: account.currency, group_id: account.groupId, symbol }),
  open: (params: OpenParams): Statement => OPEN.bind(params),
};

/** A row of HOLDINGS_AND_TERMS: the holdings, then a row of the pricing terms (all null in the one row of an account whose pricing needs no instrument). */
export interface HoldingsAndTermsRow extends TermsRow {
  open: Array<{ symbol: string; cmd: 0 | 1; volume: string; contractSize: string; openPrice: string }>;
  waiting: number;
}
