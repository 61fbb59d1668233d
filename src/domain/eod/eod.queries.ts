import { ledgerInsertSql } from '../ledger/ledger';
import { balanceUpdateSql } from '../ledger/posting';
import { namedStatement } from '../../platform/named-sql';

/**
 * The end of day's statements. A run's accounts are rows of eod_run_accounts; the transaction
 * of the chunk holding an account decides its row, so a retried job skips what is done and
 * progress is a count over those rows.
 */

/** Records a run of the date unless one is queued or running (the partial unique index decides). */
export const INSERT_RUN = namedStatement<{ id: string; trading_date: string; cutoff_at: Date; requested_by: string | null }>(
  `insert into eod_runs (id, created_at, updated_at, trading_date, status, cutoff_at, requested_by)
   values (:id, now(), now(), :trading_date, 'queued', :cutoff_at, :requested_by)
   on conflict (trading_date) where status in ('queued', 'running') do nothing
   returning id`,
);

export const ACTIVE_RUN_OF_DATE = namedStatement<{ trading_date: string }>(
  `select id from eod_runs where trading_date = :trading_date and status in ('queued', 'running') limit 1`,
);

/** Every trading account that existed when the rollover started (wallets never trade). */
export const INSERT_RUN_ACCOUNTS = namedStatement<{ run_id: string; cutoff_at: Date }>(
  `insert into eod_run_accounts (run_id, account_id, status, swaps_booked, snapshot_written)
   select :run_id, a.id, 'pending', 0, false from accounts a
    where a.kind <> 'wallet' and a.group_id is not null and a.created_at < :cutoff_at
   on conflict do nothing`,
);

export const RUN_ACCOUNT_IDS = namedStatement<{ run_id: string }>(
  `select account_id from eod_run_accounts where run_id = :run_id order by account_id`,
);

export const MARK_RUN_RUNNING = namedStatement<{ run_id: string; total: number }>(
  `update eod_runs set status = 'running', started_at = coalesce(started_at, now()), accounts_total = :total, updated_at = now()
    where id = :run_id and status in ('queued', 'running')`,
);

/** The run's progress, counted from its accounts. */
export const RUN_PROGRESS = namedStatement<{ run_id: string }>(
  `select count(*) filter (where status = 'done')::int as done,
          count(*) filter (where status = 'failed')::int as failed,
          coalesce(sum(swaps_booked), 0)::int as swaps,
          count(*) filter (where snapshot_written)::int as snapshots
     from eod_run_accounts where run_id = :run_id`,
);

/** Accounts no job decided (their job gave up, or was lost) count as failed when the run finishes. */
/**
 * A chunk's account ids as a uuid array, for `= any(...)`: the run's items and rows are then
 * probed by their keys, 100 lookups, whatever the planner believes of a run inserted moments
 * ago (with an `in (select ...)` semi-join and the new run's rows not in the statistics yet, it
 * scanned every item of the run for each chunk).
 */
const CHUNK_IDS = 'array(select jsonb_array_elements_text(:account_ids::jsonb)::uuid)';

export const FAIL_PENDING_ACCOUNTS = namedStatement<{ run_id: string; reason: string }>(
  `update eod_run_accounts set status = 'failed', error = coalesce(error, :reason) where run_id = :run_id and status = 'pending'`,
);

export const FAIL_CHUNK_ACCOUNTS = namedStatement<{ run_id: string; account_ids: string; reason: string }>(
  `update eod_run_accounts set status = 'failed', error = :reason
    where run_id = :run_id and status = 'pending' and account_id = any(${CHUNK_IDS})`,
);

export const FINISH_RUN = namedStatement<{
  run_id: string;
  status: string;
  done: number;
  failed: number;
  swaps: number;
  snapshots: number;
  error: string | null;
}>(
  `update eod_runs set status = :status, accounts_done = :done, accounts_failed = :failed, swaps_booked = :swaps,
          snapshots_written = :snapshots, error = :error, finished_at = now(), updated_at = now()
    where id = :run_id and status in ('queued', 'running')`,
);

/**
 * The customers due a daily statement of the date (ledger movements or open orders in a
 * snapshot) and not sent one yet, with their accounts' figures, a page at a time.
 */
export const STATEMENTS_DUE = namedStatement<{ trading_date: string; after: string; limit: number }>(
  `select c.id as customer_id, c.email, c.first_name, c.locale,
          json_agg(json_build_object('login', s.login::text, 'balance', s.balance::text, 'equity', s.equity::text,
                                     'currency', a.currency) order by s.login) as accounts
     from account_daily_snapshots s
     join accounts a on a.id = s.account_id
     join customers c on c.id = a.customer_id
    where s.trading_date = :trading_date and (s.movements <> '{}'::jsonb or s.open_orders > 0)
      and c.id > :after
      and not exists (select 1 from daily_statements d where d.customer_id = c.id and d.trading_date = :trading_date)
    group by c.id
    order by c.id
    limit :limit`,
);

/** Takes the (customer, date) key of a statement; answers it when this call took it. */
export const INSERT_DAILY_STATEMENT = namedStatement<{ customer_id: string; trading_date: string; mail_id: string }>(
  `insert into daily_statements (customer_id, trading_date, mail_id, created_at)
   values (:customer_id, :trading_date, :mail_id, now())
   on conflict do nothing
   returning customer_id`,
);

/** The progress of the runs in flight and of the latest finished one, for /metrics. */
export const RUNS_FOR_METRICS = namedStatement<Record<string, never>>(
  `select r.trading_date::text as trading_date, r.status, r.accounts_total as total,
          count(i.*) filter (where i.status = 'done')::int as done,
          count(i.*) filter (where i.status = 'failed')::int as failed
     from eod_runs r left join eod_run_accounts i on i.run_id = r.id
    where r.id in (
      select id from eod_runs where status in ('queued', 'running')
      union all (select id from eod_runs where status in ('completed', 'failed') order by finished_at desc limit 1)
    )
    group by r.id`,
);

/*
 * A chunk's accounts in one transaction; when one of them fails, each is redone as a chunk of
 * its own (domain/eod/account-chunk.ts).
 */

/**
 * The chunk's items still pending and their account rows, locked in account order (the order
 * every balance change locks accounts in), with whether the date's snapshot exists: one
 * statement for the chunk. `of i, a`: those rows only, never a row the chunks share.
 */
export const LOCK_CHUNK = namedStatement<{ run_id: string; account_ids: string; trading_date: string }>(
  `select i.account_id,
          exists (select 1 from account_daily_snapshots s where s.account_id = i.account_id and s.trading_date = :trading_date) as has_snapshot
     from eod_run_accounts i
     join accounts a on a.id = i.account_id
    where i.run_id = :run_id and i.status = 'pending'
      and i.account_id = any(${CHUNK_IDS})
    order by i.account_id
      for update of i, a`,
);

export const MARK_ACCOUNTS_DONE = namedStatement<{ run_id: string; account_ids: string }>(
  `update eod_run_accounts set status = 'done', swaps_booked = 0, snapshot_written = false, error = null
    where run_id = :run_id and account_id = any(${CHUNK_IDS})`,
);

export const OPEN_ORDERS_OF_CHUNK = namedStatement<{ account_ids: string; cutoff_at: Date; trading_date: string }>(
  `select o.account_id, o.ticket::text as ticket, o.symbol, o.cmd, o.volume::text as volume, o.open_price::text as open_price,
          o.contract_size::text as contract_size, o.created_at as opened_at,
          gi.swap_long::text as swap_long, gi.swap_short::text as swap_short,
          (o.created_at < :cutoff_at
            and not exists (select 1 from swap_bookings s where s.ticket = o.ticket and s.trading_date = :trading_date)) as due
     from orders o
     join accounts a on a.id = o.account_id
     join instruments i on i.symbol = o.symbol
     left join group_instruments gi on gi.group_id = a.group_id and gi.instrument_id = i.id
    where o.account_id = any(${CHUNK_IDS}) and o.status = 'open'
    order by o.account_id, o.ticket`,
);

/**
 * Books the swaps in one statement: takes each order's (ticket, date) key (a key taken before
 * books nothing), changes the balance by their sum, and appends one ledger row of kind `swap`
 * per key taken, referencing the order as its profit row does, balance_after chained in ticket
 * order (the rows are inserted, and numbered, in that order). The caller holds the account rows
 * locked; they are probed by key, as a hash join would read every account once a chunk.
 * Answers, per account, how many it booked and the balance after.
 */
export const BOOK_CHUNK_SWAPS = namedStatement<{ rows: string; trading_date: string }>(
  `with owed as (
     select (r->>'ticket')::bigint as ticket, (r->>'account_id')::uuid as account_id, (r->>'amount')::numeric as amount
       from jsonb_array_elements(:rows::jsonb) r
   ), b as (
     insert into swap_bookings (ticket, trading_date, account_id, amount, created_at)
     select ticket, :trading_date, account_id, amount, now() from owed
     on conflict do nothing
     returning ticket, account_id, amount
   ), t as (
     select account_id, sum(amount) as total, count(*) as n from b group by account_id
   ), a as (
     ${balanceUpdateSql({
       delta: 't.total',
       at: 'now()',
       from: 't',
       where: 'accounts.id = any(array(select account_id from t)) and accounts.id = t.account_id',
       returning: 'accounts.id, accounts.balance',
     })}
   ), x as (
     select b.ticket, b.ticket::text as reference, b.amount, b.account_id,
            a.balance - t.total + sum(b.amount) over (partition by b.account_id order by b.ticket) as balance_after
       from b join a on a.id = b.account_id join t on t.account_id = b.account_id
   ), l as (
     ${ledgerInsertSql([
       {
         id: 'gen_random_uuid()',
         bookedAt: 'now()',
         accountId: 'x.account_id',
         kind: 'swap',
         amount: 'x.amount',
         balanceAfter: 'x.balance_after',
         referenceType: 'order',
         referenceId: 'x.reference',
         comment: `'Swap of order ' || x.reference || ' for ' || :trading_date`,
         from: 'x order by x.account_id, x.ticket',
       },
     ])}
   )
   select a.id::text as account_id, a.balance::text as balance, t.n::int as booked from a join t on t.account_id = a.id`,
);

/**
 * Writes the accounts' snapshots of the date and marks their items done, in one statement. The
 * movements are the sums per ledger kind of the account's rows after its previous snapshot (by
 * date); a date run after a later one (a back-fill) counts nothing, as the later snapshot
 * already counted every row since the one before, and a row is counted once. `ledger_seq` is
 * the last row counted, never below that of an earlier date (it is at least the previous
 * snapshot's), so the previous snapshot's is the largest before the date: one index probe, not
 * a read of every snapshot the account has. Each account's rows are summed inside a `lateral`
 * subquery read from its (account_id, seq) index: a grouped subquery cannot be flattened into a
 * join, and a join let a planner whose statistics predate the latest runs' swaps hash the whole
 * ledger once a chunk. The items are probed by key (run, account), not read as the run's set.
 */
export const WRITE_CHUNK_SNAPSHOTS = namedStatement<{ run_id: string; trading_date: string; rows: string }>(
  `with r as (
     select (x->>'account_id')::uuid as account_id, (x->>'login')::bigint as login, (x->>'balance')::numeric as balance,
            (x->>'equity')::numeric as equity, (x->>'margin')::numeric as margin, (x->>'free_margin')::numeric as free_margin,
            (x->>'floating_profit')::numeric as floating_profit, (x->>'open_orders')::int as open_orders,
            (x->>'swaps')::int as swaps
       from jsonb_array_elements(:rows::jsonb) x
   ), prev as (
     select r.account_id,
            coalesce((select p.ledger_seq from account_daily_snapshots p
                       where p.account_id = r.account_id and p.trading_date < :trading_date
                       order by p.trading_date desc limit 1), 0) as seq,
            exists (select 1 from account_daily_snapshots n where n.account_id = r.account_id and n.trading_date > :trading_date) as later
       from r
   ), mv as (
     select prev.account_id, l.kind, l.amount, l.last
       from prev cross join lateral (
              select kind, sum(amount) as amount, max(seq) as last
                from ledger_entries l where l.account_id = prev.account_id and l.seq > prev.seq
               group by kind
            ) l
      where not prev.later
   ), agg as (
     select account_id, jsonb_object_agg(kind, amount::text) as movements, max(last) as last from mv group by account_id
   ), s as (
     insert into account_daily_snapshots (id, account_id, login, trading_date, balance, equity, margin, free_margin,
       floating_profit, movements, ledger_seq, open_orders, created_at)
     select gen_random_uuid(), r.account_id, r.login, :trading_date, r.balance, r.equity, r.margin, r.free_margin,
            r.floating_profit, coalesce(agg.movements, '{}'::jsonb), greatest(prev.seq, coalesce(agg.last, 0)), r.open_orders, now()
       from r join prev on prev.account_id = r.account_id left join agg on agg.account_id = r.account_id
     on conflict (account_id, trading_date) do nothing
     returning account_id
   ), d as (
     update eod_run_accounts i
        set status = 'done', swaps_booked = r.swaps, snapshot_written = exists (select 1 from s where s.account_id = r.account_id),
            error = null
       from r where i.run_id = :run_id and i.account_id = any(array(select account_id from r)) and i.account_id = r.account_id
     returning 1
   )
   select (select count(*) from s)::int as written, (select count(*) from d)::int as marked`,
);
