import { namedStatement } from '../../platform/named-sql';

/**
 * The columns the rules need of an active challenge, its account and its open orders (as a
 * JSON array), for the challenges a statement's `c` selects.
 */
const RULE_COLUMNS = `c.id as challenge_id, c.account_id, c.customer_id, c.login::text as login, c.phase,
       a.balance::text as balance, a.currency, a.group_id,
       c.initial_balance::text as initial_balance, c.day_start_equity::text as day_start_equity,
       c.high_water_mark::text as high_water_mark, c.max_daily_loss_pct::text as max_daily_loss_pct,
       c.max_total_loss_pct::text as max_total_loss_pct, c.total_loss_mode, c.profit_target_pct::text as profit_target_pct,
       c.min_trading_days, c.ends_at,
       coalesce((select json_agg(json_build_object('symbol', o.symbol, 'cmd', o.cmd, 'volume', o.volume::text,
                        'openPrice', o.open_price::text, 'contractSize', o.contract_size::text))
                   from orders o where o.account_id = c.account_id and o.status = 'open'), '[]'::json) as open`;

/**
 * The active challenges on the given accounts (a JSON array of ids): on a tick, those the
 * engine's lookup found holding the symbol; in the sweep, those a step selected.
 */
export const ACTIVE_CHALLENGES_OF_ACCOUNTS = namedStatement<{ account_ids: string }>(
  `select ${RULE_COLUMNS}
     from prop_challenges c join accounts a on a.id = c.account_id
    where c.status = 'active' and c.account_id in (select (jsonb_array_elements_text(:account_ids::jsonb))::uuid)`,
);

/** The same for the active challenges on accounts with the given logins (a JSON array of numbers). */
export const ACTIVE_CHALLENGES_OF_LOGINS = namedStatement<{ logins: string }>(
  `select ${RULE_COLUMNS}
     from prop_challenges c join accounts a on a.id = c.account_id
    where c.status = 'active' and c.login in (select (jsonb_array_elements_text(:logins::jsonb))::bigint)`,
);

/**
 * Raises high-water marks (`rows`: a JSON array of {id, equity}): up only, and only while the
 * challenge is active. One statement per tick, however many moved.
 */
export const RAISE_HIGH_WATER_MARKS = namedStatement<{ rows: string }>(
  `update prop_challenges c set high_water_mark = v.equity, updated_at = now()
     from jsonb_to_recordset(:rows::jsonb) as v(id uuid, equity numeric)
    where c.id = v.id and c.status = 'active' and c.high_water_mark < v.equity`,
);

/**
 * Takes the day start of the active challenges of some accounts at the rollover of trading
 * date `day`, one statement for them all (`rows`: `[{account_id, value}]`).
 * `day_start_date` is the date of the rollover that last took it (the start date before the
 * first): the first rollover on the start date takes it, a date already taken is not taken
 * again by the same account job, and an older date (a back-filled run) never moves it back.
 */
export const TAKE_DAY_STARTS = namedStatement<{ rows: string; day: string }>(
  `update prop_challenges c set day_start_equity = v.value, day_start_date = :day::date, updated_at = now()
     from jsonb_to_recordset(:rows::jsonb) as v(account_id uuid, value numeric)
    where c.account_id = v.account_id and c.status = 'active' and c.day_start_date <= :day::date
   returning c.id`,
);

/**
 * The state machine's one move out of `active` into `failed`: matches only an active
 * challenge, so of two deciders (two workers, a breach and a pass) exactly one moves it.
 */
export const FAIL_CHALLENGE = namedStatement<{ id: string; failure: string }>(
  `update prop_challenges set status = 'failed', failure = :failure::jsonb, decided_at = now(), updated_at = now()
    where id = :id and status = 'active' returning account_id`,
);

/** The move out of `active` into `passed`, as conditional as the failure's. */
export const PASS_CHALLENGE = namedStatement<{ id: string }>(
  `update prop_challenges set status = 'passed', decided_at = now(), updated_at = now()
    where id = :id and status = 'active' returning account_id`,
);

/** A decided stage's account takes no new orders (403 TRADING_DISABLED). */
export const DISABLE_TRADING = namedStatement<{ account_id: string }>(
  `update accounts set trading_disabled = true, updated_at = now() where id = :account_id and not trading_disabled`,
);

/** Records that a failed challenge's orders are all closed. */
export const MARK_CLOSED_OUT = namedStatement<{ id: string }>(
  `update prop_challenges set closed_out_at = now(), updated_at = now() where id = :id and closed_out_at is null`,
);

/** Failed challenges whose close-out has not finished `grace_seconds` after the failure: the sweep re-queues them. */
export const CLOSE_OUT_DUE = namedStatement<{ grace_seconds: number; limit: number }>(
  `select id from prop_challenges
    where status = 'failed' and closed_out_at is null and decided_at < now() - make_interval(secs => :grace_seconds)
    order by decided_at limit :limit`,
);

/** Active challenges past their time limit. */
export const TIME_LIMIT_DUE = namedStatement<{ limit: number }>(
  `select account_id from prop_challenges
    where status = 'active' and ends_at is not null and ends_at <= now() order by ends_at limit :limit`,
);

/**
 * Active challenges with nothing open whose balance reaches the target: the pass candidates
 * the sweep looks at, in case an evaluation after a close was lost.
 */
export const PASS_CANDIDATES = namedStatement<{ limit: number }>(
  `select c.account_id from prop_challenges c join accounts a on a.id = c.account_id
    where c.status = 'active'
      and a.balance >= c.initial_balance * (1 + c.profit_target_pct / 100)
      and not exists (select 1 from orders o where o.account_id = c.account_id and o.status = 'open')
    limit :limit`,
);

/**
 * Days with a trade, per account (a JSON array of ids): the distinct UTC dates on which an
 * order was opened or closed.
 */
export const TRADING_DAYS = namedStatement<{ account_ids: string }>(
  `select account_id, count(distinct day)::int as days from (
     select account_id, (created_at at time zone 'UTC')::date as day from orders
      where account_id in (select (jsonb_array_elements_text(:account_ids::jsonb))::uuid)
     union all
     select account_id, (closed_at at time zone 'UTC')::date from orders
      where account_id in (select (jsonb_array_elements_text(:account_ids::jsonb))::uuid) and closed_at is not null
   ) t group by account_id`,
);

/** The open orders of an account, by ticket: what a close-out closes. */
export const OPEN_TICKETS = namedStatement<{ account_id: string }>(
  `select ticket::text as ticket from orders where account_id = :account_id and status = 'open' order by ticket`,
);

/**
 * Every stage of the run a challenge belongs to, phase 1 first: back along `previous` to the
 * first stage, then forward (each stage has at most one successor: `previous_id` is unique).
 */
export const STAGES_OF_RUN = namedStatement<{ id: string }>(
  `with recursive back as (
     select id, previous_id from prop_challenges where id = :id::uuid
     union all
     select p.id, p.previous_id from prop_challenges p join back b on p.id = b.previous_id
   ), run as (
     select c.id, c.phase, c.status, c.login, c.created_at
       from prop_challenges c join back b on b.id = c.id and b.previous_id is null
     union all
     select c.id, c.phase, c.status, c.login, c.created_at from prop_challenges c join run r on c.previous_id = r.id
   )
   select id, phase, status, login::text as login,
          to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at
     from run order by phase`,
);
