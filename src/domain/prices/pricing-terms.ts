import type { EntityManager } from '@mikro-orm/postgresql';
import type { GroupInstrument } from '../../entities/group-instrument.entity';
import type { Instrument } from '../../entities/instrument.entity';
import { executeNamed } from '../../db/bound-statement';
import { namedStatement, type Statement } from '../../platform/named-sql';
import { TtlCache } from '../../platform/ttl-cache';
import { NO_COMMISSION, type CommissionTerms } from './commission';

/** What pricing reads of an instrument. */
export type PricedInstrument = Pick<Instrument, 'symbol' | 'digits' | 'contractSize' | 'baseCurrency' | 'quoteCurrency'>;

/** What pricing reads of the account group's row for an instrument, by the instrument's symbol. */
export type GroupRowTerms = Pick<GroupInstrument, 'enabled' | 'spread' | 'commissionValue'> & { symbol: string };

/**
 * The pricing inputs that change only when staff edit instruments, group rows or the group's
 * terms: plain values read by one statement, no entity of the unit of work.
 */
export interface PricingTerms {
  instruments: PricedInstrument[];
  rows: GroupRowTerms[];
  joining: PricedInstrument[];
  /** The group's commission; a group row's commission_value overrides its value per symbol. */
  commission: CommissionTerms;
}

/**
 * The terms of the instruments a CTE named `wanted` (id, quote_currency) lists, as CTEs to
 * follow it: `currencies`, and `terms`, one row per instrument the pricing needs: those
 * wanted (`wanted`), with the account group's row for each, and those joining any two of the
 * account currency, USD and the wanted instruments' quote currencies (`joining`), which
 * conversion into the account currency may need, each with the group's commission terms.
 * The account currency and group are `:currency` and `:group_id` unless `of` gives them as
 * SQL expressions of the statement (a CTE that read the account, say).
 */
export function termsCtes(
  of: { currency: string; groupId: string } = { currency: ':currency::text', groupId: ':group_id::uuid' },
): string {
  return `currencies as (
  select ${of.currency} as c union select 'USD' union select quote_currency from wanted
), terms as (
  select i.id, i.symbol, i.digits, i.contract_size, i.base_currency, i.quote_currency, i.id in (select id from wanted) as wanted,
         (i.base_currency in (select c from currencies) and i.quote_currency in (select c from currencies)) as joining,
         gi.group_id as gi_group_id, gi.enabled as gi_enabled, gi.spread as gi_spread, gi.commission_value as gi_commission_value,
         g.commission_type as grp_commission_type, g.commission_value::text as grp_commission_value
    from instruments i
    left join group_instruments gi on gi.instrument_id = i.id and gi.group_id = ${of.groupId} and i.id in (select id from wanted)
    left join trading_groups g on g.id = ${of.groupId}
   where i.id in (select id from wanted)
      or (i.base_currency in (select c from currencies) and i.quote_currency in (select c from currencies))
)`;
}

interface TermsParams {
  /** The symbols as a JSON array. */
  symbols: string;
  /** An account whose open positions' symbols are wanted too, or null. */
  holdings_of: string | null;
  currency: string;
  group_id: string | null;
}

let termsStatement: ReturnType<typeof namedStatement<TermsParams>> | undefined;

/** Whose terms: the account currency and group, and (`holdingsOf`, its id) whether its open positions' symbols are wanted too. */
export interface TermsOf {
  currency: string;
  groupId: string | null;
  holdingsOf?: string | null;
}

/** The one read of an account's pricing terms for some symbols: one statement. */
export function pricingTermsStatement(account: TermsOf, symbols: string[]): Statement {
  termsStatement ??= namedStatement<TermsParams>(`
with wanted as (
  select id, quote_currency from instruments
   where symbol in (select jsonb_array_elements_text(:symbols::jsonb)
                    union select symbol from orders where account_id = :holdings_of::uuid and status = 'open')
), ${termsCtes()}
select * from terms`);
  return termsStatement.bind({
    symbols: JSON.stringify([...new Set(symbols)]),
    holdings_of: account.holdingsOf ?? null,
    currency: account.currency,
    group_id: account.groupId,
  });
}

/** A row of `terms`: an instrument's columns, what it is there for, its group row's prefixed `gi_` (null without one), and the group's commission terms prefixed `grp_` (null without a group). */
export interface TermsRow {
  id: string | null;
  symbol: string;
  digits: number;
  contract_size: string;
  base_currency: string;
  quote_currency: string;
  wanted: boolean | null;
  joining: boolean | null;
  gi_group_id: string | null;
  gi_enabled: boolean | null;
  gi_spread: string | null;
  gi_commission_value: string | null;
  grp_commission_type: CommissionTerms['type'] | null;
  grp_commission_value: string | null;
}

/** Rows of `terms`, alone or composed into a wider statement, as PricingTerms. */
export function termsOfRows(rows: readonly TermsRow[]): PricingTerms {
  const terms: PricingTerms = { instruments: [], rows: [], joining: [], commission: NO_COMMISSION };
  for (const row of rows) {
    if (row.id === null) continue;
    if (row.grp_commission_type) terms.commission = { type: row.grp_commission_type, value: row.grp_commission_value ?? '0' };
    const instrument: PricedInstrument = {
      symbol: row.symbol,
      digits: row.digits,
      contractSize: row.contract_size,
      baseCurrency: row.base_currency,
      quoteCurrency: row.quote_currency,
    };
    if (row.wanted) terms.instruments.push(instrument);
    if (row.joining) terms.joining.push(instrument);
    if (row.gi_group_id !== null)
      terms.rows.push({
        symbol: row.symbol,
        enabled: row.gi_enabled === true,
        spread: row.gi_spread ?? '0',
        commissionValue: row.gi_commission_value,
      });
  }
  return terms;
}

/** An account's pricing terms for `symbols`, in one round trip. */
export async function readPricingTerms(em: EntityManager, account: TermsOf, symbols: string[]): Promise<PricingTerms> {
  return termsOfRows(await executeNamed<TermsRow>(em, pricingTermsStatement(account, symbols)));
}

/**
 * Pricing terms read at most once per group, currency and set of symbols within `ttlMs`, for
 * the passes that price many accounts alike (the engine's margin pre-check, an end-of-day chunk,
 * the prop challenges' equity): terms change only when staff edit a group or an instrument, and a
 * pass prices with the terms it found first. Callers asking while a read is in flight share it;
 * a failed read is not kept. (A bulk close run caches what a close reads, the account with its
 * terms in one statement, per account: see RunTermsCache.)
 */
export class PricingTermsCache {
  private readonly entries: TtlCache<PricingTerms>;

  constructor(ttlMs: number) {
    this.entries = new TtlCache(ttlMs);
  }

  get(em: EntityManager, of: { currency: string; groupId: string | null }, symbols: string[]): Promise<PricingTerms> {
    const sorted = [...new Set(symbols)].sort();
    return this.entries.get(`${of.groupId ?? ''}|${of.currency}|${sorted.join(',')}`, () =>
      readPricingTerms(em, { currency: of.currency, groupId: of.groupId }, sorted),
    );
  }
}
