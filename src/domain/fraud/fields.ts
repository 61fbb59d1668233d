import type { RunBound } from '../../db/bound-transaction';

/**
 * The events a fraud rule can be written for. `verification_change` is a staff change of a
 * customer's verification level: it never holds the change, a `review` opens a case.
 */
export const FRAUD_EVENTS = [
  'signup',
  'login',
  'deposit',
  'withdrawal',
  'transfer',
  'bonus_grant',
  'promo_redeem',
  'ib_accrual',
  'verification_change',
] as const;
export type FraudEvent = (typeof FRAUD_EVENTS)[number];

/**
 * The raw signals of one event, as the caller knows them: stored with every evaluation, and all
 * a replay (the preview) has beyond the field values recorded then.
 */
export interface FraudSignals {
  customerId: string | null;
  /** Decimal text in `currency`, when the event moves money. */
  amount?: string | null;
  currency?: string | null;
  ip?: string | null;
  deviceId?: string | null;
  /** ISO 3166-1 alpha-2 of the address, when a caller knows it (no geolocation database is shipped). */
  ipCountry?: string | null;
  email?: string | null;
  country?: string | null;
  /** A payment instrument fingerprint (from a provider), or a withdrawal destination fingerprint. */
  instrument?: string | null;
  destination?: string | null;
  /** At `verification_change`: the staff user who changed the level, and the level before and after. */
  staff?: { id: string; email: string } | null;
  levelFrom?: number | null;
  levelTo?: number | null;
}

/** What a field may read beyond the event: the lists as this evaluation sees them. */
export interface FieldContext {
  lists: ReadonlyMap<string, readonly string[]>;
}

export type FieldValue = string | number | boolean | null;

interface FieldDef {
  description: string;
  read(run: RunBound, s: FraudSignals, ctx: FieldContext): Promise<FieldValue>;
}

async function one<T>(run: RunBound, sql: string, values: unknown[]): Promise<T | undefined> {
  return (await run<T>({ sql, values }))[0];
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

interface CustomerFields {
  email: string;
  country: string | null;
  verification_level: number;
  lifecycle: string;
  created_at: Date;
}

/**
 * The customer's own fields, read once per evaluation: several rule fields read the same row,
 * and an evaluation's signals object lives exactly as long as the evaluation.
 */
const customerRows = new WeakMap<FraudSignals, Promise<CustomerFields | undefined>>();

function customerRow(run: RunBound, s: FraudSignals): Promise<CustomerFields | undefined> {
  if (!s.customerId) return Promise.resolve(undefined);
  let row = customerRows.get(s);
  if (!row) {
    row = one<CustomerFields>(
      run,
      'select email, country, verification_level, lifecycle, created_at from customers where id = ?',
      [s.customerId],
    );
    customerRows.set(s, row);
  }
  return row;
}

/**
 * Every field a rule condition may name, with how it is read at an evaluation. A field is read
 * only when an enabled rule of the event names it; a field with no value (null) never matches.
 */
export const FRAUD_FIELDS: Readonly<Record<string, FieldDef>> = {
  'staff.excepted': {
    description:
      'At `verification_change`: whether the staff user who changed the level is on the `verification_exceptions` list (by id or email)',
    read: async (_r, s, ctx) => {
      if (!s.staff) return null;
      const exceptions = ctx.lists.get('verification_exceptions') ?? [];
      return exceptions.includes(s.staff.id.toLowerCase()) || exceptions.includes(s.staff.email.toLowerCase());
    },
  },
  'verification.level_from': {
    description: 'At `verification_change`: the level before the change',
    read: async (_r, s) => s.levelFrom ?? null,
  },
  'verification.level_to': {
    description: 'At `verification_change`: the level after the change',
    read: async (_r, s) => s.levelTo ?? null,
  },
  'customer.id': { description: 'The customer id (uuid)', read: async (_r, s) => s.customerId },
  'customer.email_domain': {
    description: 'The part of the email after @, lower case',
    read: async (run, s) => {
      const email = s.email ?? (await customerRow(run, s))?.email;
      return email ? email.slice(email.lastIndexOf('@') + 1).toLowerCase() : null;
    },
  },
  'customer.country': {
    description: 'The country of the customer record (ISO 3166-1 alpha-2)',
    read: async (run, s) => s.country ?? (await customerRow(run, s))?.country ?? null,
  },
  'customer.age_hours': {
    description: 'Hours since the customer was created (integer)',
    read: async (run, s) => {
      const c = await customerRow(run, s);
      return c ? Math.floor((Date.now() - new Date(c.created_at).getTime()) / 3_600_000) : null;
    },
  },
  'customer.lifecycle': {
    description: 'The lifecycle stage (lead, registered, verified, funded, active, dormant, closed)',
    read: async (run, s) => (await customerRow(run, s))?.lifecycle ?? null,
  },
  'kyc.level': {
    description: 'The verification level, 0 to 3',
    read: async (run, s) => num((await customerRow(run, s))?.verification_level),
  },
  'device.id': { description: 'The X-Device-Id sent with the request', read: async (_r, s) => s.deviceId ?? null },
  'device.linked_customers': {
    description: 'How many other customers were seen with the same device id (ever)',
    read: async (run, s) =>
      s.deviceId
        ? Number(
            (
              await one<{ n: string }>(
                run,
                'select count(distinct customer_id) as n from fraud_signals where device_id = ? and customer_id is distinct from ?',
                [s.deviceId, s.customerId],
              )
            )?.n ?? 0,
          )
        : null,
  },
  'ip.address': { description: 'The client address as the service trusts it', read: async (_r, s) => s.ip ?? null },
  'ip.country': {
    description:
      'The country of the client address, when the caller supplied one (no geolocation is built in: otherwise no value)',
    read: async (_r, s) => s.ipCountry ?? null,
  },
  amount_usd: {
    description: 'The amount of the event, when it is in USD (other currencies: no value)',
    read: async (_r, s) => (s.amount && s.currency === 'USD' ? Math.abs(Number(s.amount)) : null),
  },
  deposits_24h: {
    description: "Completed deposits booked on the customer's accounts in the last 24 hours",
    read: async (run, s) =>
      s.customerId
        ? Number(
            (
              await one<{ n: string }>(
                run,
                `select count(*) as n from ledger_entries l join accounts a on a.id = l.account_id
                  where a.customer_id = ? and l.kind = 'deposit' and l.created_at > now() - interval '24 hours'`,
                [s.customerId],
              )
            )?.n ?? 0,
          )
        : null,
  },
  withdrawals_without_trades_30d: {
    description: 'Withdrawals requested in the last 30 days, when the customer closed no trade in that time (else 0)',
    read: async (run, s) => {
      if (!s.customerId) return null;
      const row = await one<{ w: string; t: string }>(
        run,
        `select (select count(*) from withdrawals where customer_id = ? and created_at > now() - interval '30 days') as w,
                (select count(*) from orders o join accounts a on a.id = o.account_id
                  where a.customer_id = ? and o.status = 'closed' and o.closed_at > now() - interval '30 days') as t`,
        [s.customerId, s.customerId],
      );
      return row && Number(row.t) === 0 ? Number(row.w) : 0;
    },
  },
  trades_since_last_deposit: {
    description: "Trades closed on the customer's accounts since its last completed deposit (no deposit: no value)",
    read: async (run, s) => {
      if (!s.customerId) return null;
      const row = await one<{ n: string | null }>(
        run,
        `with last as (select max(l.created_at) as at from ledger_entries l join accounts a on a.id = l.account_id
                        where a.customer_id = ? and l.kind = 'deposit')
         select case when last.at is null then null else
           (select count(*) from orders o join accounts a on a.id = o.account_id
             where a.customer_id = ? and o.status = 'closed' and o.closed_at > last.at) end as n from last`,
        [s.customerId, s.customerId],
      );
      return num(row?.n);
    },
  },
  same_instrument_customers: {
    description: 'How many other customers used the same payment instrument fingerprint',
    read: async (run, s) =>
      s.instrument
        ? Number(
            (
              await one<{ n: string }>(
                run,
                'select count(distinct customer_id) as n from fraud_signals where instrument = ? and customer_id is distinct from ?',
                [s.instrument, s.customerId],
              )
            )?.n ?? 0,
          )
        : null,
  },
  'withdrawal.destination_customers': {
    description: 'How many other customers withdrew to the same destination (normalised payment data fingerprint)',
    read: async (run, s) =>
      s.destination
        ? Number(
            (
              await one<{ n: string }>(
                run,
                'select count(distinct customer_id) as n from fraud_signals where destination = ? and customer_id is distinct from ?',
                [s.destination, s.customerId],
              )
            )?.n ?? 0,
          )
        : null,
  },
};

export const FIELD_NAMES = Object.keys(FRAUD_FIELDS) as [string, ...string[]];

/** The fields, as the OpenAPI description lists them. */
export const FIELDS_DESCRIPTION = Object.entries(FRAUD_FIELDS)
  .map(([name, def]) => `\`${name}\`: ${def.description}`)
  .join('; ');
