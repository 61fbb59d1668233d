import { namedStatement, type Statement } from '../../platform/named-sql';

/**
 * The statements of opening a market order, in the order openMarketOrder sends them inside its
 * transaction (the bench's plain `pg` baseline, bench/orders.bench.ts, sends the same ones):
 * lock the account, read its open positions and waiting pending orders, read the pricing
 * terms, insert the order with its order.opened event. Opening is a hot path: four statements
 * with BEGIN and COMMIT where the unit of work sent ten.
 */

/** The account row, locked for the free-margin check: orders racing for the same margin take turns. */
const LOCK_ACCOUNT = namedStatement<{ account_id: string }>(`select * from accounts where id = :account_id for update`);

/**
 * What the account already holds, read after the lock in a statement of its own (a statement
 * that waited for the lock reads other tables as of when it started, and would miss an order a
 * racing open committed meanwhile): its open positions, as the free-margin check needs them
 * (decimals as text), and how many pending orders may still become positions.
 */
const HOLDINGS = namedStatement<{ account_id: string }>(`
select coalesce((select json_agg(json_build_object('symbol', symbol, 'cmd', cmd, 'volume', volume::text,
                  'contractSize', contract_size::text, 'openPrice', open_price::text))
                 from orders where account_id = :account_id and status = 'open'), '[]'::json) as open,
       (select count(*) from pending_orders where account_id = :account_id and status in ('pending', 'triggered'))::int as waiting`);

/**
 * The pricing terms in one statement (PricingContext.loadTerms sends three): the instruments
 * of `symbols`, the group's row for each (its columns prefixed `gi_`, null without one), and
 * the instruments joining any two of the account currency, USD and the instruments' quote
 * currencies (`joining`), which conversion into the account currency may need. Symbols and
 * currencies travel as JSON arrays: the same text binds alike through knex and `pg`.
 */
const TERMS = namedStatement<{ symbols: string; currencies: string; group_id: string | null }>(`
with wanted as (
  select id, quote_currency from instruments where symbol in (select jsonb_array_elements_text(:symbols::jsonb))
), currencies as (
  select jsonb_array_elements_text(:currencies::jsonb) as c union select quote_currency from wanted
)
select i.*, i.id in (select id from wanted) as wanted,
       (i.base_currency in (select c from currencies) and i.quote_currency in (select c from currencies)) as joining,
       gi.group_id as gi_group_id, gi.enabled as gi_enabled, gi.spread as gi_spread, gi.commission_value as gi_commission_value,
       gi.swap_long as gi_swap_long, gi.swap_short as gi_swap_short, gi.created_at as gi_created_at, gi.updated_at as gi_updated_at
  from instruments i
  left join group_instruments gi on gi.instrument_id = i.id and gi.group_id = :group_id::uuid and i.id in (select id from wanted)
 where i.id in (select id from wanted)
    or (i.base_currency in (select c from currencies) and i.quote_currency in (select c from currencies))`);

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
  /** The order.opened event's data (the order's view) as JSON text; the statement sets its `order` to the ticket drawn. */
  event: string;
}

/**
 * The order and its order.opened event in one statement: the ticket comes from the sequence, so
 * the event's `order` is set from the inserted row. Answers the inserted row.
 */
const OPEN = namedStatement<OpenParams>(`
with o as (
  insert into orders (id, created_at, updated_at, account_id, login, symbol, cmd, volume, open_price, contract_size,
                      sl, tp, comment, trailing_stop, status)
  values (:id, :opened_at, :opened_at, :account_id, :login, :symbol, :cmd, :volume, :open_price, :contract_size,
          :sl, :tp, :comment, :trailing_stop, 'open')
  returning *
), e as (
  insert into domain_events (id, created_at, updated_at, type, aggregate_type, aggregate_id, customer_id, data)
  select gen_random_uuid(), :opened_at::timestamptz, :opened_at::timestamptz, 'order.opened' /* EventType */, 'order',
         o.ticket::text, :customer_id::uuid, jsonb_set(:event::jsonb, '{order}', to_jsonb(o.ticket)) from o
  returning id
)
select * from o`);

export const openStatements = {
  lockAccount: (accountId: string): Statement => LOCK_ACCOUNT.bind({ account_id: accountId }),
  holdings: (accountId: string): Statement => HOLDINGS.bind({ account_id: accountId }),
  terms: (accountCurrency: string, groupId: string | null, symbols: string[]): Statement =>
    TERMS.bind({
      symbols: JSON.stringify([...new Set(symbols)]),
      currencies: JSON.stringify([accountCurrency, 'USD']),
      group_id: groupId,
    }),
  open: (params: OpenParams): Statement => OPEN.bind(params),
};

/** A row of HOLDINGS. */
export interface HoldingsRow {
  open: Array<{ symbol: string; cmd: 0 | 1; volume: string; contractSize: string; openPrice: string }>;
  waiting: number;
}
