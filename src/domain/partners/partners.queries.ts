import { namedStatement, type Statement } from '../../platform/named-sql';
import { EVALUATION_STORED } from '../fraud/fraud.queries';
import { auditInsertSql, type AuditParams } from '../audit/audit';
import { eventInsertSql } from '../events/outbox';
import { ledgerInsertSql } from '../ledger/ledger';
import { balanceUpdateSql, type PostingStatementPart } from '../ledger/posting';

// --- the tree --------------------------------------------------------------------------

/** A partner and the partners above it, nearest first (`depth` 0 is the partner itself). */
export const ANCESTORS = namedStatement<{ partner_id: string }>(
  `with recursive up(id, parent_partner_id, depth) as (
     select id, parent_partner_id, 0 from partners where id = :partner_id::uuid
     union all
     select p.id, p.parent_partner_id, up.depth + 1 from partners p join up on p.id = up.parent_partner_id where up.depth < 64
   ) select id, depth from up order by depth`,
);

/** A partner and every partner below it, with the depth below it (0 is the partner itself). */
export const SUBTREE = namedStatement<{ partner_id: string }>(
  `with recursive down(id, depth) as (
     select id, 0 from partners where id = :partner_id::uuid
     union all
     select p.id, down.depth + 1 from partners p join down on p.parent_partner_id = down.id where down.depth < 64
   ) select id, depth from down`,
);

/** Every partner's depth in the tree (1 at the top), in one walk down from the top partners. */
export const ALL_DEPTHS = namedStatement<Record<string, never>>(
  `with recursive t(id, depth) as (
     select id, 1 from partners where parent_partner_id is null
     union all
     select p.id, t.depth + 1 from partners p join t on p.parent_partner_id = t.id where t.depth < 64
   ) select id, depth from t`,
);

/** A partner by its code, whatever the case it is typed in, or by its id. */
export const PARTNER_BY_REF = namedStatement<{ ref: string }>(
  `select id, code, customer_id from partners
    where code = upper(:ref::text) or (:ref::text ~* '^[0-9a-f-]{36}$' and id::text = lower(:ref::text)) limit 1`,
);

// --- accrual at a close ----------------------------------------------------------------

/** The names one form of the chain's read gives its CTEs. */
interface ChainNames {
  /** The closed order, one row: ticket, login, symbol, volume, created_at, closed_at, customer_id, currency, group_id, email, country, entry. */
  order: string;
  chain: string;
  plan: string;
}

/** The chain of partners above the order's `entry`, up to 10 levels: the body of the recursive CTE `self`. */
const chainBody = (order: string, self: string) => `select entry, 1 from ${order} where entry is not null
     union all
     select p.parent_partner_id, up.level + 1 from ${self} up join partners p on p.id = up.partner_id
      where p.parent_partner_id is not null and up.level < 10`;

/** The chain (chainBody) and the plan of its first partner, as CTEs named by `n`. */
function chainCtes(n: ChainNames, recursive: boolean): string {
  // In a statement that is not WITH RECURSIVE, the recursion goes in a WITH of its own.
  let chain = `${n.chain} as (
     with recursive up(partner_id, level) as (
       ${chainBody(n.order, 'up')}
     ) select partner_id, level from up
   )`;
  if (recursive)
    chain = `${n.chain}(partner_id, level) as (
     ${chainBody(n.order, n.chain)}
   )`;
  return `${chain}, ${n.plan} as (
     select row_to_json(x) as plan from (
       select pl.id, pl.currency, pl.basis, pl.levels, pl.max_per_lot::text as max_per_lot, pl.group_ids, pl.symbol_overrides,
              pl.charge, pl.min_hold_seconds
         from ${n.order} o join partners p on p.id = o.entry join ib_plans pl on pl.id = p.plan_id) x
   )`;
}

/** One row per partner of the chain, nearest first; `commission` is what the order paid, as text. */
const chainRows = (n: ChainNames, commission: string) =>
  `select o.ticket::text as ticket, o.login, o.symbol, o.volume::text as lots, o.closed_at, o.customer_id, o.currency,
          o.group_id, o.email, o.country,
          extract(epoch from (o.closed_at - o.created_at))::float8 as held_seconds,
          ${commission} as commission,
          (select (gi.spread * power(10::numeric, -i.digits) * o.volume * i.contract_size)::text
             from group_instruments gi join instruments i on i.id = gi.instrument_id
            where gi.group_id = o.group_id and i.symbol = o.symbol and i.quote_currency = o.currency) as spread,
          ch.level, p.id as partner_id, p.customer_id as partner_customer_id, p.plan_id,
          exists (select 1 from fraud_cases f where f.status in ('open', 'investigating')
                   and f.customer_id in (o.customer_id, p.customer_id)) as under_case,
          (select plan from ${n.plan}) as plan
     from ${n.order} o join ${n.chain} ch on true join partners p on p.id = ch.partner_id`;

/** The partner a customer's orders start the chain at: its own partner record, else the partner it is attributed to. */
const ENTRY = 'coalesce((select p.id from partners p where p.customer_id = a.customer_id), c.partner_id) as entry';

/**
 * A closed order as the accrual reads it, with the chain of partners above its customer: the
 * customer's own partner record first when it is a partner (its own orders start the chain at
 * itself), else the partner it is attributed to; then each parent, up to 10 levels. The
 * commission is what the order paid over both sides; the spread is the group's markup on it.
 * Each row carries the plan of the chain's first partner (`plan`, null if it has none): the
 * plan the whole order is paid under, read in the same round trip as the chain.
 */
export const CLOSE_CHAIN = namedStatement<{ ticket: string }>(
  `with recursive o as (
     select o.ticket, o.login::text as login, o.symbol, o.volume, o.created_at, o.closed_at, a.id as account_id,
            a.customer_id, a.currency, a.group_id, c.email, c.country, ${ENTRY}
       from orders o join accounts a on a.id = o.account_id join customers c on c.id = a.customer_id
      where o.ticket = :ticket::bigint and o.status = 'closed'
   ), ${chainCtes({ order: 'o', chain: 'chain', plan: 'pl' }, true)}
   ${chainRows(
     { order: 'o', chain: 'chain', plan: 'pl' },
     `(select coalesce(-sum(l.amount), 0)::text from ledger_entries l
            where l.reference_type = 'order' and l.reference_id = o.ticket::text and l.kind = 'commission')`,
   )}
    order by ch.level`,
);

/**
 * CLOSE_CHAIN as a part of the close's own statement (PostingStatementPart of `order_close`: it
 * reads the close's `o`, `a` and `s`), so the accrual of a close costs no read of its own: it
 * answers the same rows as a json array (`closed_at` as text), empty when the customer trades
 * under no partner. The tables it reads (the tree, the plans, the fraud cases) are as of the
 * close's start.
 */
export const CLOSE_CHAIN_AT_CLOSE: PostingStatementPart = {
  ctes: `ib_order as (
  select o.ticket, a.login::text as login, o.symbol, o.volume, o.created_at, o.closed_at, a.customer_id, a.currency,
         a.group_id, c.email, c.country, ${ENTRY}
    from o cross join a join customers c on c.id = a.customer_id
), ${chainCtes({ order: 'ib_order', chain: 'ib_chain', plan: 'ib_plan' }, false)}`,
  answer: `select coalesce(json_agg(row_to_json(r) order by r.level), '[]'::json) from (${chainRows(
    { order: 'ib_order', chain: 'ib_chain', plan: 'ib_plan' },
    '(-s.commission::numeric)::text',
  )}) r`,
  // Left out for a client the read before the close found without a partner; should the locked
  // row say otherwise (attributed since), the hook reads the chain itself (CLOSE_CHAIN).
  applies: (account) => account.referred !== false,
};

/**
 * The accruals of one close, once, and `ib.reward_accrued` for each row inserted, on its
 * partner's stream, in the order of the levels, as the CTEs after a WITH and the answer: only
 * when `when` (SQL) holds. A retried close inserts nothing (unique on order, partner, level), so
 * it writes no event either. `id` and the event's `data` (the accrual's view) come with each
 * row: an inserted row is exactly the row given. It answers one row: the rows inserted
 * (`inserted`, a json array in the order of the levels) and whether `when` held (`stored`).
 */
const accrualsSql = (when: string) => `r as (
     select * from jsonb_to_recordset(:rows::jsonb) as r(id uuid, ticket text, partner_id text, level int, plan_id text,
          client_customer_id text, login text, symbol text, lots text, amount text, currency text, status text, reason text,
          charge text, closed_at text, partner_customer_id uuid, data text)
   ), ins as (
     insert into ib_accruals (id, created_at, updated_at, ticket, partner_id, level, plan_id, client_customer_id, login, symbol,
       lots, amount, currency, status, reason, charge, closed_at)
     select r.id, now(), now(), r.ticket::bigint, r.partner_id::uuid, r.level, r.plan_id::uuid,
            r.client_customer_id::uuid, r.login::bigint, r.symbol, r.lots::numeric, r.amount::numeric, r.currency, r.status,
            r.reason, r.charge, r.closed_at::timestamptz
       from r where ${when} order by r.level
     on conflict (ticket, partner_id, level) do nothing
     returning id, partner_id, level, amount::text as amount, status, reason
   ), e as (
  ${eventInsertSql({
    type: 'ib.reward_accrued',
    aggregateType: 'partner',
    aggregateId: 'r.partner_id',
    customerId: 'r.partner_customer_id',
    data: 'r.data::json',
    at: 'now()',
    from: 'ins join r on r.id = ins.id order by r.level',
  })}
   )
   select coalesce((select json_agg(json_build_object('id', id::text, 'partner_id', partner_id::text, 'level', level,
                     'amount', amount, 'status', status, 'reason', reason) order by level) from ins), '[]'::json) as inserted,
          ${when} as stored`;

/** The accruals of one close (accrualsSql), one statement. */
export const INSERT_ACCRUALS = namedStatement<{ rows: string }>(`with ${accrualsSql('true')}`);

const ACCRUALS_AFTER_EVALUATION = namedStatement<{ rows: string }>(accrualsSql(EVALUATION_STORED));

/**
 * INSERT_ACCRUALS with the close's fraud evaluation, decided ahead on the rules this process
 * holds (AllowedAhead's `cte`), stored by the same statement: the accruals, whose statuses
 * follow that decision, are inserted only when the evaluation is (the rules are still the ones
 * that decided it), and `stored` says whether it was. One statement for both.
 */
export function insertAccrualsEvaluated(evaluation: Statement, rows: string): Statement {
  const accruals = ACCRUALS_AFTER_EVALUATION.bind({ rows });
  return { sql: `with ${evaluation.sql}, ${accruals.sql}`, values: [...evaluation.values, ...accruals.values] };
}

// --- payment ---------------------------------------------------------------------------

function payRewards(referenceType: 'order' | 'ib_payment') {
  return namedStatement<{ rows: string }>(`with r as materialized (
  select * from jsonb_to_recordset(:rows::jsonb) as r(n int, customer_id uuid, partner_id text, amount numeric, reference_id text,
       comment text, data text, accruals jsonb, payment_id uuid)
), w as materialized (
  select x.id from accounts x join r on r.customer_id = x.customer_id where x.kind = 'wallet' order by r.n for update of x
), a as (
  ${balanceUpdateSql({
    delta: 'r.amount',
    at: 'now()',
    from: 'r',
    where: "accounts.customer_id = r.customer_id and accounts.kind = 'wallet' and accounts.id in (select id from w)",
    returning:
      'accounts.id, accounts.login, accounts.customer_id, accounts.balance, r.n, r.partner_id, r.amount, r.reference_id, r.comment, r.data, r.accruals, r.payment_id',
  })}
), l as (
  ${ledgerInsertSql([
    {
      id: 'gen_random_uuid()',
      bookedAt: 'now()',
      accountId: 'a.id',
      kind: 'ib_reward',
      amount: 'a.amount',
      balanceAfter: 'a.balance',
      referenceType,
      referenceId: 'a.reference_id',
      comment: 'a.comment',
      from: 'a order by a.n',
    },
  ])}
), e as (
  ${eventInsertSql({
    type: 'ib.reward_paid',
    aggregateType: 'partner',
    aggregateId: 'a.partner_id',
    customerId: 'a.customer_id',
    data: `(left(a.data, -1) || ',"login":' || to_json(a.login::text)::text || '}')::json`,
    at: 'now()',
    from: 'a order by a.n',
  })}
), m as (
  update ib_accruals set status = 'paid', paid_at = now(), updated_at = now(), payment_id = a.payment_id
    from a cross join lateral jsonb_array_elements_text(a.accruals) j(id)
   where ib_accruals.id = j.id::uuid and ib_accruals.status = 'accrued'
  returning 1
)
select a.n, a.partner_id from a order by a.n`);
}

/**
 * Pays partners rewards into their wallets, each row `n` of `rows` one partner (one customer:
 * a wallet appears once per statement): its balance, its `ib_reward` row (referencing the
 * order, for an instant payment, or the daily payment), `ib.reward_paid`, and its accruals
 * marked paid, in one statement. The wallets are locked in the order of `n` before any is
 * changed, so payments of overlapping partners (a chain, climbed upwards) cannot deadlock. A
 * partner without a wallet is paid nothing and its accruals stay owed: the answer lists the
 * rows paid.
 */
export const PAY_INSTANT = payRewards('order');
export const PAY_DAILY = payRewards('ib_payment');

export const MARK_PAID = namedStatement<{ ids: string; payment_id: string | null }>(
  `update ib_accruals set status = 'paid', paid_at = now(), updated_at = now(), payment_id = :payment_id::uuid
    where id in (select jsonb_array_elements_text(:ids::jsonb)::uuid) and status = 'accrued'`,
);

/**
 * The partners with daily accruals owed (of orders closed before `until`), each with what is
 * due and whether it has a wallet to be paid into: the end of day pays each once per date.
 * Deepest in the tree first: a close paying instantly locks its chain's wallets from the
 * client's partner upwards, so a batch paying several of them locks them in the same order
 * and neither waits on the other in a circle.
 */
export const DAILY_DUE = namedStatement<{ until: Date; trading_date: string }>(
  `with recursive t(id, depth) as (
     select id, 1 from partners where parent_partner_id is null
     union all
     select p.id, t.depth + 1 from partners p join t on p.parent_partner_id = t.id where t.depth < 64
   )
   select a.partner_id, p.customer_id, sum(a.amount)::text as amount, count(*)::int as n,
          exists (select 1 from accounts w where w.customer_id = p.customer_id and w.kind = 'wallet') as has_wallet
     from ib_accruals a join partners p on p.id = a.partner_id left join t on t.id = a.partner_id
    where a.status = 'accrued' and a.charge = 'daily' and a.closed_at < :until
      and not exists (select 1 from ib_payments x where x.partner_id = a.partner_id and x.trading_date = :trading_date::date)
    group by a.partner_id, p.customer_id, t.depth order by t.depth desc nulls last, a.partner_id`,
);

/**
 * The accruals a batch of daily payments covers, locked, so a close paying at the same time
 * cannot pay them twice. The partners are an array, so the read goes by the (partner, status)
 * index however many accruals of the past the table holds.
 */
export const DUE_OF_PARTNERS = namedStatement<{ partner_ids: string; until: Date }>(
  `select id, partner_id::text as partner_id, amount::text as amount from ib_accruals
    where partner_id = any (array(select jsonb_array_elements_text(:partner_ids::jsonb)::uuid)) and status = 'accrued'
      and charge = 'daily' and closed_at < :until
    order by id for update`,
);

/** The date's payments of a batch of partners, once each: a rerun of the date inserts nothing and pays nothing. */
export const INSERT_PAYMENTS = namedStatement<{ rows: string; trading_date: string }>(
  `insert into ib_payments (id, created_at, updated_at, partner_id, trading_date, amount, accruals)
   select gen_random_uuid(), now(), now(), r.partner_id, :trading_date::date, r.amount, r.n
     from jsonb_to_recordset(:rows::jsonb) as r(partner_id uuid, amount numeric, n int) order by r.partner_id
   on conflict (partner_id, trading_date) do nothing returning id::text as id, partner_id::text as partner_id`,
);

// --- holds and clawback ----------------------------------------------------------------

/** The held accruals of a customer's orders, or of the customer as a partner, locked. */
export const HELD_OF_CUSTOMER = namedStatement<{ customer_id: string }>(
  `select a.id, a.partner_id, p.customer_id as partner_customer_id, a.amount::text as amount, a.charge, a.ticket::text as ticket
     from ib_accruals a join partners p on p.id = a.partner_id
    where a.status = 'on_hold' and (a.client_customer_id = :customer_id::uuid or p.customer_id = :customer_id::uuid)
    order by a.id for update of a`,
);

export const SET_ACCRUAL_STATUS = namedStatement<{ ids: string; status: string; reason: string | null }>(
  `update ib_accruals set status = :status, reason = coalesce(:reason, reason), updated_at = now()
    where id in (select jsonb_array_elements_text(:ids::jsonb)::uuid)`,
);

/** A customer's paid rewards since a date, by partner, locked: what a clawback takes back. */
export const PAID_SINCE = namedStatement<{ customer_id: string; since: Date }>(
  `select a.id, a.partner_id, p.customer_id as partner_customer_id, a.amount::text as amount, a.status
     from ib_accruals a join partners p on p.id = a.partner_id
    where a.client_customer_id = :customer_id::uuid and a.status in ('paid', 'accrued', 'on_hold') and a.closed_at >= :since
      and a.amount > 0
    order by a.partner_id, a.id for update of a`,
);

/** Takes back `amount` from a partner's wallet (its balance may go below zero), with `ib.reward_reversed`. */
export const REVERSE_REWARD = namedStatement<{
  customer_id: string;
  partner_id: string;
  amount: string;
  reference_id: string;
  comment: string;
  data: string;
}>(`with a as (
  ${balanceUpdateSql({
    delta: '-(:amount::numeric)',
    at: 'now()',
    where: "customer_id = :customer_id::uuid and kind = 'wallet'",
    returning: 'id, login, customer_id, balance',
  })}
), l as (
  ${ledgerInsertSql([
    {
      id: 'gen_random_uuid()',
      bookedAt: 'now()',
      accountId: 'a.id',
      kind: 'ib_reward_reversal',
      amount: '-(:amount::numeric)',
      balanceAfter: 'a.balance',
      referenceType: 'ib_clawback',
      referenceId: ':reference_id',
      comment: ':comment',
      from: 'a',
    },
  ])}
), e as (
  ${eventInsertSql({
    type: 'ib.reward_reversed',
    aggregateType: 'partner',
    aggregateId: ':partner_id',
    customerId: 'a.customer_id',
    data: `(left(:data::text, -1) || ',"login":' || to_json(a.login::text)::text || '}')::json`,
    at: 'now()',
    from: 'a',
  })}
)
select a.login::text as login, a.balance::text as balance from a`);

/** An audit row written in the statement stream of a posting hook (which holds no unit of work). */
export const AUDIT_ROW = namedStatement<AuditParams>(auditInsertSql('now()', '(select 1) as one'));

/** A charge-back's deposit: whether the reversal was a charge-back, and when the deposit it takes back was booked. */
export const CHARGED_BACK_DEPOSIT = namedStatement<{ reference_id: string }>(
  `select bool_or(kind = 'chargeback') as charged_back, min(created_at) filter (where kind = 'deposit') as deposited_at
     from ledger_entries where reference_type = 'deposit_intent' and reference_id = :reference_id`,
);

/** When a customer was created: a fraud verdict's clawback takes back every reward its orders earned. */
export const CUSTOMER_SINCE = namedStatement<{ customer_id: string }>(
  `select created_at from customers where id = :customer_id::uuid`,
);

// --- the partner portal ----------------------------------------------------------------

/** A partner's totals: its clients, its partners below, and its rewards by state. */
export const PARTNER_TOTALS = namedStatement<{ partner_id: string }>(
  `select (select count(*)::int from customers c where c.partner_id = :partner_id::uuid) as clients,
          (select count(*)::int from partners p where p.parent_partner_id = :partner_id::uuid) as sub_partners,
          coalesce(sum(a.amount) filter (where a.status = 'paid'), 0)::numeric(38,2)::text as paid,
          coalesce(sum(a.amount) filter (where a.status = 'accrued'), 0)::numeric(38,2)::text as pending,
          coalesce(sum(a.amount) filter (where a.status = 'on_hold'), 0)::numeric(38,2)::text as on_hold,
          coalesce(sum(a.amount) filter (where a.status = 'reversed'), 0)::numeric(38,2)::text as reversed
     from ib_accruals a where a.partner_id = :partner_id::uuid`,
);

/** A partner's own clients with their closed lots: never their balances. */
export const PARTNER_CLIENTS = namedStatement<{ partner_id: string }>(
  `select c.email, c.country, c.created_at, c.ftd_at,
          (select coalesce(sum(o.volume), 0)::numeric(20,2)::text from orders o join accounts a on a.id = o.account_id
            where a.customer_id = c.id and o.status = 'closed') as lots
     from customers c where c.partner_id = :partner_id::uuid order by c.created_at, c.id limit 1000`,
);

/** A partner's accruals closed in [from, to), newest first. */
export const PARTNER_REWARDS = namedStatement<{ partner_id: string; from: Date; to: Date }>(
  `select id, ticket::text as ticket, level, symbol, lots::text as lots, amount::text as amount, currency, status, reason,
          closed_at, paid_at
     from ib_accruals where partner_id = :partner_id::uuid and closed_at >= :from and closed_at < :to
    order by closed_at desc, id limit 5000`,
);

/** The partners below one, at any depth, with their own client counts. */
export const SUB_PARTNERS = namedStatement<{ partner_id: string }>(
  `with recursive down(id, depth) as (
     select id, 0 from partners where id = :partner_id::uuid
     union all
     select p.id, down.depth + 1 from partners p join down on p.parent_partner_id = down.id where down.depth < 10
   )
   select p.id, p.code, p.parent_partner_id, d.depth, p.created_at,
          (select count(*)::int from customers c where c.partner_id = p.id) as clients
     from down d join partners p on p.id = d.id where d.depth > 0 order by d.depth, p.created_at, p.id`,
);
