import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Account } from '../../entities/account.entity';
import { GroupInstrument } from '../../entities/group-instrument.entity';
import type { Group } from '../../entities/group.entity';
import { GroupSchema, groupView } from '../groups/group-terms';
import { GroupInstrumentSchema, groupInstrumentView, InstrumentSchema, instrumentView } from './instruments';

/**
 * What a customer may trade (decisions, section 18): for each group one of its accounts
 * trades under, the group's trading terms and the instruments it has enabled, each with
 * its spread, commission and swaps. Only the customer's own groups: another group's terms
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
  instruments: z.array(CustomerInstrumentSchema).describe('Enabled instruments, by symbol'),
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
  const rows = await em.find(
    GroupInstrument,
    { group: { $in: [...groups.keys()] }, enabled: true },
    { populate: ['instrument'], orderBy: { instrument: { symbol: 'asc' } } },
  );
  return [...groups.values()].map(({ group, logins }) => ({
    group_id: group.id,
    logins,
    ...pick(groupView(group), GROUP_FIELDS),
    instruments: rows
      .filter((r) => r.group.id === group.id)
      .map((r) => {
        const instrument = r.instrument.getEntity();
        return {
          ...pick(instrumentView(instrument), INSTRUMENT_FIELDS),
          ...pick(groupInstrumentView(r, instrument.symbol), ROW_FIELDS),
        };
      }),
  }));
}
