import { namedStatement } from '../../platform/named-sql';

/** The statements of promo codes and campaigns (promo-codes.ts). */
export const LOCK_CODE = namedStatement<{ code: string }>(
  `select id, code, campaign_id, bonus_program_id, max_redemptions, redemptions, max_per_customer, expires_at,
          first_deposit_only, min_deposit::text as min_deposit, countries, partner_id
     from promo_codes where code = :code and active for update`,
);
export const FIND_CODE = namedStatement<{ code: string }>(
  `select id, code, campaign_id, bonus_program_id, max_redemptions, redemptions, max_per_customer, expires_at,
          first_deposit_only, min_deposit::text as min_deposit, countries, partner_id
     from promo_codes where code = :code and active`,
);
export const LOCK_CAMPAIGN = namedStatement<{ id: string }>(
  `select id, starts_at, ends_at, budget_type, budget_limit::text as budget_limit, budget_used::text as budget_used
     from campaigns where id = :id::uuid for update`,
);
export const FIND_CAMPAIGN = namedStatement<{ id: string }>(
  `select id, starts_at, ends_at, budget_type, budget_limit::text as budget_limit, budget_used::text as budget_used
     from campaigns where id = :id::uuid`,
);
export const CUSTOMER_USES = namedStatement<{ promo_code_id: string; customer_id: string }>(
  `select count(*)::int as n from promo_redemptions where promo_code_id = :promo_code_id::uuid and customer_id = :customer_id::uuid`,
);
export const FIRST_ELIGIBLE_ACCOUNT = namedStatement<{ customer_id: string }>(
  `select id from accounts where customer_id = :customer_id::uuid and kind in ('live', 'prop') order by login`,
);
export const USE_CODE = namedStatement<{ id: string }>(
  `update promo_codes set redemptions = redemptions + 1, updated_at = now() where id = :id::uuid`,
);
export const USE_BUDGET = namedStatement<{ id: string; amount: string }>(
  `update campaigns set budget_used = budget_used + :amount::numeric, updated_at = now() where id = :id::uuid`,
);
export const INSERT_REDEMPTION = namedStatement<{
  id: string;
  promo_code_id: string;
  code: string;
  customer_id: string;
  login: string | null;
  status: string;
  bonus_id: string | null;
  cost: string;
}>(
  `insert into promo_redemptions (id, created_at, updated_at, promo_code_id, code, customer_id, login, status, bonus_id, cost)
   values (:id::uuid, now(), now(), :promo_code_id::uuid, :code, :customer_id::uuid, :login::bigint, :status,
           :bonus_id::uuid, :cost::numeric)
   returning id, created_at`,
);
export const PROGRAM_TERMS = namedStatement<{ id: string }>(
  `select id, name, currency, kind, amount::text as amount, percent::text as percent, max_amount::text as "maxAmount",
          min_deposit::text as "minDeposit", group_ids as "groupIds", first_deposit_only as "firstDepositOnly",
          lots_per_unit::text as "lotsPerUnit", lifetime_days as "lifetimeDays", enabled, starts_at as "startsAt",
          ends_at as "endsAt"
     from bonus_programs where id = :id::uuid`,
);

export interface CodeRow {
  id: string;
  code: string;
  campaign_id: string | null;
  bonus_program_id: string;
  max_redemptions: number | null;
  redemptions: number;
  max_per_customer: number;
  expires_at: Date | null;
  first_deposit_only: boolean;
  min_deposit: string | null;
  countries: string[] | null;
  partner_id: string | null;
}
export interface CampaignRow {
  id: string;
  starts_at: Date;
  ends_at: Date;
  budget_type: 'usage' | 'spend' | null;
  budget_limit: string | null;
  budget_used: string;
}

export const ARMED_OF_CUSTOMER = namedStatement<{ customer_id: string }>(
  `select r.id, r.login::text as login, r.promo_code_id, r.bonus_id, c.bonus_program_id, c.min_deposit::text as min_deposit,
          c.campaign_id, c.expires_at
     from promo_redemptions r join promo_codes c on c.id = r.promo_code_id
    where r.customer_id = :customer_id::uuid and r.status = 'armed' order by r.created_at for update of r`,
);
export const APPLY_REDEMPTION = namedStatement<{ id: string; status: string; bonus_id: string | null; cost: string }>(
  `update promo_redemptions set status = :status, bonus_id = :bonus_id::uuid, cost = :cost::numeric, updated_at = now()
    where id = :id::uuid`,
);
export const LOCK_CAMPAIGN_BY_ID = LOCK_CAMPAIGN;

/**
 * The customer's trading accounts a redeem may grant on (the one named, or all of them), locked
 * by id before anything else: see the lock order in promo-redeem.ts.
 */
export const LOCK_REDEEM_ACCOUNTS = namedStatement<{ customer_id: string; login: string | null }>(
  `select id from accounts where customer_id = :customer_id::uuid and kind in ('live', 'prop')
      and (:login::bigint is null or login = :login::bigint)
    order by id for update`,
);
