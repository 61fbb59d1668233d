import { MetadataStorage, ReferenceKind, UnderscoreNamingStrategy, type EntityProperty } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { GroupInstrument } from '../../entities/group-instrument.entity';
import { Instrument } from '../../entities/instrument.entity';
import { namedStatement, type Statement } from '../../platform/named-sql';
import { NO_COMMISSION, type CommissionTerms } from './commission';

/** The pricing inputs that change only when staff edit instruments, group rows or the group's terms. */
export interface PricingTerms {
  instruments: Instrument[];
  rows: GroupInstrument[];
  joining: Instrument[];
  /** The group's commission (decisions 13); a group row's commission_value overrides its value per symbol. */
  commission: CommissionTerms;
}

/**
 * The columns of an entity's table, from its decorators (the project's underscore naming),
 * so a column added to the entity is read without anyone listing it here. Works before the
 * ORM is initialised, as the benches use it without one.
 */
function columnsOf(entity: object): string[] {
  const naming = new UnderscoreNamingStrategy();
  const meta = MetadataStorage.getMetadataFromDecorator(entity as never);
  return (Object.values(meta.properties) as EntityProperty[]).flatMap((p) => {
    if (p.fieldNames?.length) return p.fieldNames;
    if (p.persist === false) return [];
    if (p.kind === ReferenceKind.MANY_TO_ONE) return [naming.joinKeyColumnName(p.name)];
    return [(p as { fieldName?: string }).fieldName ?? naming.propertyToColumnName(p.name)];
  });
}

/** The group's own terms the rows carry (the same in every row), prefixed `grp_`: null without a group. */
const GROUP_TERMS_PREFIX = 'grp_';
const GROUP_TERM_COLUMNS = `g.commission_type as ${GROUP_TERMS_PREFIX}commission_type, g.commission_value::text as ${GROUP_TERMS_PREFIX}commission_value`;

/** The group row's columns as the terms rows carry them: prefixed `gi_`, null without a row. */
const GROUP_ROW_PREFIX = 'gi_';
let groupColumnList: string | undefined;
function groupColumns(): string {
  groupColumnList ??= columnsOf(GroupInstrument)
    .map((c) => `gi.${c} as ${GROUP_ROW_PREFIX}${c}`)
    .join(', ');
  return groupColumnList;
}

/**
 * The terms of the instruments a CTE named `wanted` (id, quote_currency) lists, as CTEs to
 * follow it: `currencies`, and `terms`, one row per instrument the pricing needs: those
 * wanted (`wanted`), with the account group's row for each, and those joining any two of the
 * account currency, USD and the wanted instruments' quote currencies (`joining`), which
 * conversion into the account currency may need, each with the group's commission terms.
 * Takes `:currency` and `:group_id`.
 */
export function termsCtes(): string {
  return `currencies as (
  select :currency::text as c union select 'USD' union select quote_currency from wanted
), terms as (
  select i.*, i.id in (select id from wanted) as wanted,
         (i.base_currency in (select c from currencies) and i.quote_currency in (select c from currencies)) as joining,
         ${groupColumns()}, ${GROUP_TERM_COLUMNS}
    from instruments i
    left join group_instruments gi on gi.instrument_id = i.id and gi.group_id = :group_id::uuid and i.id in (select id from wanted)
    left join trading_groups g on g.id = :group_id::uuid
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

/** A row of `terms`: an instrument's columns, what it is there for, and its group row's columns prefixed `gi_`. */
export interface TermsRow extends Record<string, unknown> {
  id: string | null;
  wanted: boolean | null;
  joining: boolean | null;
  gi_group_id: string | null;
  grp_commission_type?: CommissionTerms['type'] | null;
  grp_commission_value?: string | null;
}

/**
 * Rows of `terms` (alone or composed into a wider statement, whose own columns are named in
 * `otherColumns`) as PricingTerms, the instruments and group rows as managed entities.
 */
export function termsOfRows(em: EntityManager, rows: TermsRow[], otherColumns: ReadonlySet<string> = new Set()): PricingTerms {
  const terms: PricingTerms = { instruments: [], rows: [], joining: [], commission: NO_COMMISSION };
  for (const row of rows) {
    if (row.id === null) continue;
    if (row.grp_commission_type) terms.commission = { type: row.grp_commission_type, value: row.grp_commission_value ?? '0' };
    const instrumentColumns: Record<string, unknown> = {};
    const groupColumns: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(row)) {
      if (name.startsWith(GROUP_TERMS_PREFIX)) continue;
      if (name.startsWith(GROUP_ROW_PREFIX)) groupColumns[name.slice(GROUP_ROW_PREFIX.length)] = value;
      else if (name !== 'wanted' && name !== 'joining' && !otherColumns.has(name)) instrumentColumns[name] = value;
    }
    const instrument = em.map(Instrument, instrumentColumns);
    if (row.wanted) terms.instruments.push(instrument);
    if (row.joining) terms.joining.push(instrument);
    if (row.gi_group_id !== null) terms.rows.push(em.map(GroupInstrument, groupColumns));
  }
  return terms;
}

/** An account's pricing terms for `symbols`, in one round trip. */
export async function readPricingTerms(em: EntityManager, account: TermsOf, symbols: string[]): Promise<PricingTerms> {
  const read = pricingTermsStatement(account, symbols);
  return termsOfRows(em, await em.execute<TermsRow[]>(read.sql, read.values));
}
