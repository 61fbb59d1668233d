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

/**
 * How a field is read at one evaluation: a value its signals (or the lists) give at once, or a
 * scalar SQL expression (`?` placeholders) that planFieldRead reads together with every other
 * field's in one statement, and `as` turns into the value.
 */
export type FieldSource = { value: FieldValue } | { sql: string; values: unknown[]; as: (v: unknown) => FieldValue };

interface FieldDef {
  description: string;
  read(s: FraudSignals, ctx: FieldContext): FieldSource;
}

const none: FieldSource = { value: null };
const value = (v: FieldValue | undefined): FieldSource => ({ value: v ?? null });
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const count = (v: unknown): number => Number(v ?? 0);
const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const domainOf = (email: unknown): string | null =>
  typeof email === 'string' && email ? email.slice(email.lastIndexOf('@') + 1).toLowerCase() : null;

/** A column of the customer's own row (a primary key read), or no value without a customer. */
function customerColumn(s: FraudSignals, column: string, as: (v: unknown) => FieldValue): FieldSource {
  return s.customerId ? { sql: `select ${column} from customers where id = ?`, values: [s.customerId], as } : none;
}

/**
 * How many other customers were seen with `column` = `v` in the signals. The customer's own rows
 * are left out as two ranges of the (column, customer_id) index, so a customer seen a thousand
 * times with its own device or destination costs no more than one seen once.
 */
function othersWith(
  s: FraudSignals,
  column: 'device_id' | 'instrument' | 'destination',
  v: string | null | undefined,
): FieldSource {
  if (!v) return none;
  return s.customerId
    ? {
        sql: `select count(distinct customer_id) from fraud_signals
               where ${column} = ? and (customer_id < ?::uuid or customer_id > ?::uuid)`,
        values: [v, s.customerId, s.customerId],
        as: count,
      }
    : { sql: `select count(distinct customer_id) from fraud_signals where ${column} = ?`, values: [v], as: count };
}

/**
 * Every field a rule condition may name, with how it is read at an evaluation. A field is read
 * only when an enabled rule of the event names it; a field with no value (null) never matches.
 */
export const FRAUD_FIELDS: Readonly<Record<string, FieldDef>> = {
  'staff.excepted': {
    description:
      'At `verification_change`: whether the staff user who changed the level is on the `verification_exceptions` list (by id or email)',
    read: (s, ctx) => {
      if (!s.staff) return none;
      const exceptions = ctx.lists.get('verification_exceptions') ?? [];
      return value(exceptions.includes(s.staff.id.toLowerCase()) || exceptions.includes(s.staff.email.toLowerCase()));
    },
  },
  'verification.level_from': {
    description: 'At `verification_change`: the level before the change',
    read: (s) => value(s.levelFrom),
  },
  'verification.level_to': {
    description: 'At `verification_change`: the level after the change',
    read: (s) => value(s.levelTo),
  },
  'customer.id': { description: 'The customer id (uuid)', read: (s) => value(s.customerId) },
  'customer.email_domain': {
    description: 'The part of the email after @, lower case',
    read: (s) => (s.email !== undefined && s.email !== null ? value(domainOf(s.email)) : customerColumn(s, 'email', domainOf)),
  },
  'customer.country': {
    description: 'The country of the customer record (ISO 3166-1 alpha-2)',
    read: (s) => (s.country !== undefined && s.country !== null ? value(s.country) : customerColumn(s, 'country', text)),
  },
  'customer.age_hours': {
    description: 'Hours since the customer was created (integer)',
    read: (s) =>
      customerColumn(s, 'created_at', (v) =>
        v === null || v === undefined ? null : Math.floor((Date.now() - new Date(v as string).getTime()) / 3_600_000),
      ),
  },
  'customer.lifecycle': {
    description: 'The lifecycle stage (lead, registered, verified, funded, active, dormant, closed)',
    read: (s) => customerColumn(s, 'lifecycle', text),
  },
  'kyc.level': {
    description: 'The verification level, 0 to 3',
    read: (s) => customerColumn(s, 'verification_level', num),
  },
  'device.id': { description: 'The X-Device-Id sent with the request', read: (s) => value(s.deviceId) },
  'device.linked_customers': {
    description: 'How many other customers were seen with the same device id (ever)',
    read: (s) => othersWith(s, 'device_id', s.deviceId),
  },
  'ip.address': { description: 'The client address as the service trusts it', read: (s) => value(s.ip) },
  'ip.country': {
    description:
      'The country of the client address, when the caller supplied one (no geolocation is built in: otherwise no value)',
    read: (s) => value(s.ipCountry),
  },
  amount_usd: {
    description: 'The amount of the event, when it is in USD (other currencies: no value)',
    read: (s) => value(s.amount && s.currency === 'USD' ? Math.abs(Number(s.amount)) : null),
  },
  deposits_24h: {
    description: "Completed deposits booked on the customer's accounts in the last 24 hours",
    read: (s) =>
      s.customerId
        ? {
            sql: `select count(*) from ledger_entries l join accounts a on a.id = l.account_id
                   where a.customer_id = ? and l.kind = 'deposit' and l.created_at > now() - interval '24 hours'`,
            values: [s.customerId],
            as: count,
          }
        : none,
  },
  withdrawals_without_trades_30d: {
    description: 'Withdrawals requested in the last 30 days, when the customer closed no trade in that time (else 0)',
    read: (s) =>
      s.customerId
        ? {
            sql: `select case when exists (select 1 from orders o join accounts a on a.id = o.account_id
                                             where a.customer_id = ? and o.status = 'closed' and o.closed_at > now() - interval '30 days')
                         then 0
                         else (select count(*) from withdrawals where customer_id = ? and created_at > now() - interval '30 days') end`,
            values: [s.customerId, s.customerId],
            as: count,
          }
        : none,
  },
  trades_since_last_deposit: {
    description: "Trades closed on the customer's accounts since its last completed deposit (no deposit: no value)",
    read: (s) =>
      s.customerId
        ? {
            sql: `select case when last.at is null then null else
                    (select count(*) from orders o join accounts a on a.id = o.account_id
                      where a.customer_id = ? and o.status = 'closed' and o.closed_at > last.at) end
                    from (select max(l.created_at) as at from ledger_entries l join accounts a on a.id = l.account_id
                           where a.customer_id = ? and l.kind = 'deposit') last`,
            values: [s.customerId, s.customerId],
            as: num,
          }
        : none,
  },
  same_instrument_customers: {
    description: 'How many other customers used the same payment instrument fingerprint',
    read: (s) => othersWith(s, 'instrument', s.instrument),
  },
  'withdrawal.destination_customers': {
    description: 'How many other customers withdrew to the same destination (normalised payment data fingerprint)',
    read: (s) => othersWith(s, 'destination', s.destination),
  },
};

/**
 * How the values of some fields are read at one evaluation: the select-list columns (scalar
 * subqueries, `?` placeholders) of every field read from the database, to be sent in one
 * statement with whatever else that statement reads, and how its row becomes the values.
 */
export interface FieldRead {
  columns: readonly string[];
  values: unknown[];
  /** The values of every field asked for (what the signals gave, and the row's columns); an unknown name has no value. */
  finish(row: Readonly<Record<string, unknown>> | undefined): Record<string, FieldValue>;
}

/**
 * The read of `names` at one evaluation: what the signals give at once, and every field read
 * from the database as one column each of a single statement (one round trip, however many
 * fields and rules), each aggregate once.
 */
export function planFieldRead(names: readonly string[], s: FraudSignals, ctx: FieldContext): FieldRead {
  const given: Record<string, FieldValue> = {};
  const queued: Array<{ name: string; as: (v: unknown) => FieldValue }> = [];
  const columns: string[] = [];
  const values: unknown[] = [];
  for (const name of new Set(names)) {
    const def = FRAUD_FIELDS[name];
    const read = def ? def.read(s, ctx) : none;
    if ('value' in read) given[name] = read.value;
    else {
      columns.push(`(${read.sql}) as f${queued.length}`);
      values.push(...read.values);
      queued.push({ name, as: read.as });
    }
  }
  return {
    columns,
    values,
    finish: (row) => {
      const out = { ...given };
      queued.forEach((q, i) => (out[q.name] = q.as(row?.[`f${i}`] ?? null)));
      return out;
    },
  };
}

export const FIELD_NAMES = Object.keys(FRAUD_FIELDS) as [string, ...string[]];

/** The fields, as the OpenAPI description lists them. */
export const FIELDS_DESCRIPTION = Object.entries(FRAUD_FIELDS)
  .map(([name, def]) => `\`${name}\`: ${def.description}`)
  .join('; ');
