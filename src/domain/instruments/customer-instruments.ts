import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Account } from '../../entities/account.entity';
import { GroupInstrument } from '../../entities/group-instrument.entity';
import { Instrument } from '../../entities/instrument.entity';
import type { Group } from '../../entities/group.entity';
import { GroupSchema, groupView } from '../groups/group-terms';
import { GroupInstrumentSchema, groupInstrumentView, InstrumentSchema, instrumentView } from './instruments';

/**
 * What a customer may trade: for each group one of its accounts trades under, the group's
 * trading terms and every instrument the group trades, each with its spread, commission and
 * swaps. A group trades every instrument unless its row for the instrument disables it (as
 * the order path decides); an instrument without a row trades at no added spread, the group's
 * commission and no swap. Only the customer's own groups: another group's terms
 * are not shown, and neither are a group's name, description or exposure limits (the
 * broker's internal view of it). Every field is picked from the staff views, so the two
 * cannot disagree about a value.
 */
const GROUP_FIELDS = {
  currency: true,
  default_leverage: true,
  margin_call_level: true,
  stopout_level: true,
  commission_type: true,
  commission_value: true,
  swap_enabled: true,
  swap_multiplier: true,
  swap_free: true,
  swap_free_days: true,
  is_islamic: true,
} as const;
const INSTRUMENT_FIELDS = {
  symbol: true,
  description: true,
  digits: true,
  contract_size: true,
  base_currency: true,
  quote_currency: true,
} as const;
const ROW_FIELDS = { spread: true, commission_value: true, swap_long: true, swap_short: true } as const;

export const CustomerInstrumentSchema = InstrumentSchema.pick(INSTRUMENT_FIELDS).extend(
  GroupInstrumentSchema.pick(ROW_FIELDS).extend({
    commission_value: GroupInstrumentSchema.shape.commission_value.describe(
      "This instrument's commission when set; null means the group's commission_value",
    ),
  }).shape,
);

export const CustomerGroupTermsSchema = z.object({
  group_id: z.uuid(),
  logins: z.array(z.int()).describe('Your accounts that trade under these terms'),
  ...GroupSchema.pick(GROUP_FIELDS).shape,
  instruments: z
    .array(CustomerInstrumentSchema)
    .describe('Every instrument you may trade under these terms (all but those the group disables), by symbol'),
});
export type CustomerGroupTerms = z.output<typeof CustomerGroupTermsSchema>;

function pick<T extends Record<string, unknown>, K extends keyof T>(view: T, fields: Record<K, true>): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const key of Object.keys(fields) as K[]) out[key] = view[key];
  return out;
}

export async function customerInstruments(em: EntityManager, customerId: string): Promise<CustomerGroupTerms[]> {
  const accounts = await em.find(
    Account,
    { customer: customerId, group: { $ne: null } },
    { populate: ['group'], orderBy: { login: 'asc' } },
  );
  const groups = new Map<string, { group: Group; logins: number[] }>();
  for (const account of accounts) {
    const group = account.group!.getEntity();
    const entry = groups.get(group.id) ?? { group, logins: [] };
    entry.logins.push(Number(account.login));
    groups.set(group.id, entry);
  }
  if (groups.size === 0) return [];
  const [instruments, rows] = await Promise.all([
    em.find(Instrument, {}, { orderBy: { symbol: 'asc' } }),
    em.find(GroupInstrument, { group: { $in: [...groups.keys()] } }),
  ]);
  const rowOf = new Map(rows.map((r) => [`${r.group.id}/${r.instrument.id}`, r]));
  return [...groups.values()].map(({ group, logins }) => ({
    group_id: group.id,
    logins,
    ...pick(groupView(group), GROUP_FIELDS),
    instruments: instruments.flatMap((instrument) => {
      const row = rowOf.get(`${group.id}/${instrument.id}`);
      if (row && !row.enabled) return [];
      return [
        {
          ...pick(instrumentView(instrument), INSTRUMENT_FIELDS),
          ...(row ? pick(groupInstrumentView(row, instrument.symbol), ROW_FIELDS) : NO_ROW_TERMS),
        },
      ];
    }),
  }));
}

/** The terms of an instrument its group has no row for: the raw quote, the group's commission, no swap. */
const NO_ROW_TERMS = { spread: 0, commission_value: null, swap_long: 0, swap_short: 0 } as const;

/**
 * The symbols a customer may trade in at least one group of its accounts: every instrument
 * but those disabled in each of those groups. The wallet trades under no group, so a customer
 * with only a wallet may trade nothing.
 */
export async function customerTradeableSymbols(em: EntityManager, customerId: string): Promise<Map<string, number>> {
  const accounts = await em.find(Account, { customer: customerId, group: { $ne: null } }, { fields: ['group'] });
  const groupIds = [...new Set(accounts.map((a) => a.group!.id))];
  if (groupIds.length === 0) return new Map();
  const [instruments, disabled] = await Promise.all([
    em.find(Instrument, {}, { fields: ['symbol', 'digits'] }),
    em.find(GroupInstrument, { group: { $in: groupIds }, enabled: false }, { fields: ['group', 'instrument'] }),
  ]);
  const disabledIn = new Map<string, number>();
  for (const row of disabled) disabledIn.set(row.instrument.id, (disabledIn.get(row.instrument.id) ?? 0) + 1);
  return new Map(
    instruments.filter((i) => (disabledIn.get(i.id) ?? 0) < groupIds.length).map((i) => [i.symbol, i.digits] as const),
  );
}
