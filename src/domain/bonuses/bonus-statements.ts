import type { LedgerKind } from '../../entities/ledger-entry.entity';
import { namedStatement, type NamedStatement } from '../../platform/named-sql';
import { eventInsertSql } from '../events/outbox';
import { ledgerInsertSql } from '../ledger/ledger';
import { balanceUpdateSql } from '../ledger/posting';

/** A trading account as a bonus path locks it (decimals as text). */
export interface BonusAccountRow {
  id: string;
  login: string;
  customer_id: string;
  group_id: string | null;
  kind: string;
  currency: string;
  balance: string;
  credit: string;
}

const ACCOUNT_COLUMNS = `id, login::text as login, customer_id, group_id, kind, currency, balance::text as balance, credit::text as credit`;

export const LOCK_ACCOUNT = namedStatement<{ account_id: string }>(
  `select ${ACCOUNT_COLUMNS} from accounts where id = :account_id::uuid for update`,
);

/** A customer's own account by login, locked (another customer's login matches nothing). */
export const LOCK_CUSTOMER_ACCOUNT = namedStatement<{ customer_id: string; login: string }>(
  `select ${ACCOUNT_COLUMNS} from accounts where customer_id = :customer_id::uuid and login = :login::bigint for update`,
);

/** A bonus row with what its paths need of its programme. */
export interface BonusRow {
  id: string;
  program_id: string;
  customer_id: string;
  /** Null only while a pending bonus waits for a deposit on any eligible account. */
  account_id: string | null;
  login: string | null;
  amount: string;
  released: string;
  lots_required: string;
  lots_done: string;
  status: string;
  expires_at: Date | null;
  source_type: string;
  source_id: string | null;
  end_reason: string | null;
  hold_to: 'pending' | 'active' | null;
  created_at: Date;
  release_mode: 'on_target' | 'per_lot';
  on_transfer_out: 'forfeit' | 'proportional';
  min_hold_seconds: number;
}

const BONUS_COLUMNS = `b.id, b.program_id, b.customer_id, b.account_id, b.login::text as login, b.amount::text as amount,
  b.released::text as released, b.lots_required::text as lots_required, b.lots_done::text as lots_done, b.status,
  b.expires_at, b.source_type, b.source_id, b.end_reason, b.hold_to, b.created_at,
  p.release_mode, p.on_transfer_out, p.min_hold_seconds`;

/** The active bonuses of an account, oldest first, locked (the account row is locked first by the caller). */
export const ACTIVE_BONUSES = namedStatement<{ account_id: string }>(
  `select ${BONUS_COLUMNS} from bonuses b join bonus_programs p on p.id = b.program_id
    where b.account_id = :account_id::uuid and b.status = 'active' order by b.created_at, b.id for update of b`,
);

export const BONUS_BY_ID = namedStatement<{ id: string }>(
  `select ${BONUS_COLUMNS} from bonuses b join bonus_programs p on p.id = b.program_id where b.id = :id::uuid`,
);

export const LOCK_BONUS = namedStatement<{ id: string }>(
  `select ${BONUS_COLUMNS} from bonuses b join bonus_programs p on p.id = b.program_id where b.id = :id::uuid for update of b`,
);

/** A customer's bonuses, newest first. */
export const CUSTOMER_BONUSES = namedStatement<{ customer_id: string }>(
  `select ${BONUS_COLUMNS} from bonuses b join bonus_programs p on p.id = b.program_id
    where b.customer_id = :customer_id::uuid order by b.created_at desc, b.id limit 500`,
);

/** The active bonuses an account holds from one deposit, locked. */
export const BONUSES_OF_DEPOSIT = namedStatement<{ account_id: string; deposit_id: string }>(
  `select ${BONUS_COLUMNS} from bonuses b join bonus_programs p on p.id = b.program_id
    where b.account_id = :account_id::uuid and b.status = 'active' and b.source_type = 'deposit' and b.source_id = :deposit_id
    order by b.created_at, b.id for update of b`,
);

/** The active bonuses past their expiry on some accounts (a JSON array), locked. */
export const EXPIRED_BONUSES = namedStatement<{ account_ids: string; at: Date }>(
  `select ${BONUS_COLUMNS} from bonuses b join bonus_programs p on p.id = b.program_id
    where b.account_id in (select jsonb_array_elements_text(:account_ids::jsonb)::uuid) and b.status = 'active'
      and b.expires_at <= :at
    order by b.account_id, b.created_at, b.id for update of b`,
);

/** A new bonus: `active` (its credit booked next by the caller), `pending`, or `on_hold` with what its release makes it. */
export const INSERT_BONUS = namedStatement<{
  id: string;
  program_id: string;
  customer_id: string;
  account_id: string | null;
  login: string | null;
  amount: string;
  lots_required: string;
  expires_at: Date | null;
  source_type: string;
  source_id: string | null;
  status: 'active' | 'pending' | 'on_hold';
  hold_to: 'pending' | 'active' | null;
}>(
  `insert into bonuses (id, created_at, updated_at, program_id, customer_id, account_id, login, amount, released,
     lots_required, lots_done, status, expires_at, source_type, source_id, hold_to)
   values (:id::uuid, now(), now(), :program_id::uuid, :customer_id::uuid, :account_id::uuid, :login::bigint,
     :amount::numeric, 0, :lots_required::numeric, 0, :status, :expires_at, :source_type, :source_id, :hold_to)
   returning id`,
);

/** A pending or held bonus takes its account, amount and terms: `active` (credit booked next), or `on_hold`. */
export const SETTLE_BONUS = namedStatement<{
  id: string;
  account_id: string | null;
  login: string | null;
  amount: string;
  lots_required: string;
  expires_at: Date | null;
  status: 'active' | 'pending' | 'on_hold';
  hold_to: 'pending' | 'active' | null;
}>(
  `update bonuses set account_id = :account_id::uuid, login = :login::bigint, amount = :amount::numeric,
     lots_required = :lots_required::numeric, expires_at = :expires_at, status = :status, hold_to = :hold_to, updated_at = now()
   where id = :id::uuid`,
);

/** A customer's bonuses in the given states, locked (the customer's accounts are locked first by the caller). */
export const CUSTOMER_BONUSES_IN = namedStatement<{ customer_id: string; statuses: string[] }>(
  `select ${BONUS_COLUMNS} from bonuses b join bonus_programs p on p.id = b.program_id
    where b.customer_id = :customer_id::uuid and b.status = any(:statuses::text[]) order by b.created_at, b.id for update of b`,
);

/**
 * The redemption of a bonus that ends before it was granted (pending or on hold) is void, and
 * gives back what it took of its code and campaign: nothing was granted by it. Locks the code,
 * then the campaign, after the account (the order redeem takes them in).
 */
export const VOID_REDEMPTION_OF_BONUS = namedStatement<{ bonus_id: string }>(
  `with old as (select id, promo_code_id, cost from promo_redemptions
                 where bonus_id = :bonus_id::uuid and status in ('armed', 'on_hold') for update),
   r as (update promo_redemptions p set status = 'void', cost = 0, updated_at = now() from old where p.id = old.id
          returning old.promo_code_id, old.cost),
   c as (update promo_codes pc set redemptions = greatest(pc.redemptions - 1, 0), updated_at = now() from r
          where pc.id = r.promo_code_id returning pc.campaign_id, r.cost)
   update campaigns k set budget_used = greatest(k.budget_used - case when k.budget_type = 'usage' then 1 else c.cost end, 0),
          updated_at = now()
     from c where k.id = c.campaign_id and k.budget_type is not null`,
);

/** The redemption of a bonus follows it: `applied` once granted, `armed` while pending, `on_hold` while held. */
export const SET_REDEMPTION_OF_BONUS = namedStatement<{ bonus_id: string; status: string; cost: string | null }>(
  `update promo_redemptions set status = :status, cost = coalesce(:cost::numeric, cost), updated_at = now()
    where bonus_id = :bonus_id::uuid and status in ('armed', 'on_hold')`,
);

export const UPDATE_BONUS = namedStatement<{
  id: string;
  amount: string;
  released: string;
  lots_done: string;
  status: string;
  end_reason: string | null;
}>(
  `update bonuses set amount = :amount::numeric, released = :released::numeric, lots_done = :lots_done::numeric,
     status = :status, end_reason = :end_reason, updated_at = now()
   where id = :id::uuid`,
);

/** How many deposits the customer's accounts have booked (the current one included once booked). */
export const DEPOSIT_COUNT = namedStatement<{ customer_id: string }>(
  `select count(*)::int as n from ledger_entries l join accounts a on a.id = l.account_id
    where a.customer_id = :customer_id::uuid and l.kind = 'deposit'`,
);

/** What a grant reads of its programme (the entity has these fields too). */
export interface ProgramTerms {
  id: string;
  name: string;
  currency: string;
  kind: 'fixed' | 'deposit_percent';
  amount?: string | null;
  percent?: string | null;
  maxAmount?: string | null;
  minDeposit?: string | null;
  groupIds: string[];
  firstDepositOnly: boolean;
  lotsPerUnit: string;
  lifetimeDays?: number | null;
  enabled: boolean;
  startsAt?: Date | null;
  endsAt?: Date | null;
}

export const DEPOSIT_PROGRAMS = namedStatement<{ currency: string }>(
  `select id, name, currency, kind, amount::text as amount, percent::text as percent, max_amount::text as "maxAmount",
          min_deposit::text as "minDeposit", group_ids as "groupIds", first_deposit_only as "firstDepositOnly",
          lots_per_unit::text as "lotsPerUnit", lifetime_days as "lifetimeDays", enabled, starts_at as "startsAt",
          ends_at as "endsAt"
     from bonus_programs where trigger = 'deposit' and enabled and currency = :currency
      and (starts_at is null or starts_at <= now()) and (ends_at is null or ends_at > now())
    order by created_at, id`,
);

export interface CreditMoveParams {
  account_id: string;
  /** Signed decimal text. */
  delta: string;
  direction: 'in' | 'out';
  reason: string;
  reference_type: string;
  reference_id: string;
  comment: string | null;
}

/**
 * One change of an account's credit as one statement: the credit (posting.ts's update, bucket
 * `credit`), its ledger row and `account.credit_changed`, whose data is the CreditChange view.
 */
function creditMove(kind: LedgerKind): NamedStatement<CreditMoveParams> {
  return namedStatement<CreditMoveParams>(`with a as (
  ${balanceUpdateSql({
    bucket: 'credit',
    delta: ':delta::numeric',
    at: 'now()',
    where: 'id = :account_id::uuid',
    returning: 'id, login, customer_id, currency, balance, credit',
  })}
), l as (
  ${ledgerInsertSql([
    {
      id: 'gen_random_uuid()',
      bookedAt: 'now()',
      accountId: 'a.id',
      kind,
      bucket: 'credit',
      amount: ':delta::numeric',
      balanceAfter: 'a.credit',
      referenceType: 'bonus',
      referenceId: ':reference_id',
      comment: ':comment',
      from: 'a',
    },
  ])}
), e as (
  ${eventInsertSql({
    type: 'account.credit_changed',
    aggregateType: 'account',
    aggregateId: 'a.login::text',
    customerId: 'a.customer_id',
    data: `json_build_object('id', l.id, 'login', a.login, 'direction', :direction::text,
      'amount', abs(:delta::numeric)::numeric(38,2)::text, 'currency', a.currency, 'balance', a.balance::text,
      'credit', a.credit::text, 'reason', :reason::text, 'comment', :comment::text,
      'created_at', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`,
    at: 'now()',
    from: 'a cross join l',
  })}
)
select a.balance::text as balance, a.credit::text as credit from a`);
}

export const CREDIT_IN = creditMove('credit_in');
export const CREDIT_OUT = creditMove('credit_out');
/** The credit leg of a release (negative), then RELEASE_TO_BALANCE books the balance leg. */
export const RELEASE_FROM_CREDIT = creditMove('bonus_release');

export const RELEASE_TO_BALANCE = namedStatement<{ account_id: string; amount: string; reference_id: string; comment: string }>(
  `with a as (
  ${balanceUpdateSql({ delta: ':amount::numeric', at: 'now()', where: 'id = :account_id::uuid', returning: 'id, balance' })}
), l as (
  ${ledgerInsertSql([
    {
      id: 'gen_random_uuid()',
      bookedAt: 'now()',
      accountId: 'a.id',
      kind: 'bonus_release',
      amount: ':amount::numeric',
      balanceAfter: 'a.balance',
      referenceType: 'bonus',
      referenceId: ':reference_id',
      comment: ':comment',
      from: 'a',
    },
  ])}
)
select a.balance::text as balance from a`,
);

/** A bonus event, its data the bonus view built by the caller. */
export function bonusEvent(type: Parameters<typeof eventInsertSql>[0]['type']) {
  return namedStatement<{ bonus_id: string; customer_id: string; data: string }>(
    eventInsertSql({
      type,
      aggregateType: 'bonus',
      aggregateId: ':bonus_id',
      customerId: ':customer_id::uuid',
      data: ':data::json',
      at: 'now()',
    }),
  );
}
