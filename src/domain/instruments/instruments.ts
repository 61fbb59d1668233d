import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Group } from '../../entities/group.entity';
import { GroupInstrument } from '../../entities/group-instrument.entity';
import { Instrument } from '../../entities/instrument.entity';
import { decText, num } from '../../platform/decimal';
import { errors } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import type { StaffCaller } from '../../platform/caller';
import { CurrencyCode } from '../../platform/money-text';
import { flushUnique } from '../../db/flush-unique';

export interface NewInstrument {
  symbol: string;
  description?: string | null | undefined;
  digits: number;
  contract_size: number;
  base_currency: string;
  quote_currency: string;
}

export interface GroupInstrumentTerms {
  enabled: boolean;
  spread: number;
  commission_value?: number | null | undefined;
  swap_long: number;
  swap_short: number;
}

/** An instrument's symbol as it is created and named everywhere else. */
export const InstrumentSymbol = z
  .string()
  .regex(/^[A-Z0-9][A-Z0-9._-]{0,31}$/)
  .describe('Capital letters, digits, dot, dash or underscore; up to 32');

export const InstrumentSchema = z.object({
  id: z.uuid(),
  symbol: z.string(),
  description: z.string().nullable(),
  digits: z.int(),
  contract_size: z.number(),
  base_currency: CurrencyCode,
  quote_currency: CurrencyCode,
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type InstrumentView = z.output<typeof InstrumentSchema>;

export function instrumentView(i: Instrument): InstrumentView {
  return {
    id: i.id,
    symbol: i.symbol,
    description: i.description ?? null,
    digits: i.digits,
    contract_size: num(i.contractSize)!,
    base_currency: i.baseCurrency,
    quote_currency: i.quoteCurrency,
    created_at: i.createdAt.toISOString(),
    updated_at: i.updatedAt.toISOString(),
  };
}

/** How a group trades one instrument. */
export const GroupInstrumentSchema = z.object({
  group_id: z.uuid(),
  symbol: z.string(),
  enabled: z.boolean(),
  spread: z.number(),
  commission_value: z.number().nullable(),
  swap_long: z.number(),
  swap_short: z.number(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type GroupInstrumentView = z.output<typeof GroupInstrumentSchema>;

export function groupInstrumentView(row: GroupInstrument, symbol: string): GroupInstrumentView {
  return {
    group_id: row.group.id,
    symbol,
    enabled: row.enabled,
    spread: num(row.spread)!,
    commission_value: num(row.commissionValue),
    swap_long: num(row.swapLong)!,
    swap_short: num(row.swapShort)!,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export async function createInstrument(em: EntityManager, actor: StaffCaller, input: NewInstrument): Promise<Instrument> {
  const instrument = em.create(Instrument, {
    symbol: input.symbol,
    description: input.description ?? null,
    digits: input.digits,
    contractSize: decText(input.contract_size),
    baseCurrency: input.base_currency,
    quoteCurrency: input.quote_currency,
  });
  recordAudit(em, actor, {
    action: 'instrument.created',
    entityType: 'instrument',
    entityId: instrument.id,
    after: instrumentView(instrument),
  });
  await flushUnique(em, () => errors.conflict('SYMBOL_TAKEN', `Instrument ${input.symbol} exists`));
  return instrument;
}

export async function findInstrument(em: EntityManager, symbol: string): Promise<Instrument> {
  const instrument = await em.findOne(Instrument, { symbol });
  if (!instrument) throw errors.notFound('Instrument');
  return instrument;
}

/** Creates or replaces how a group trades a symbol; `created` tells which. */
export async function putGroupInstrument(
  em: EntityManager,
  actor: StaffCaller,
  groupId: string,
  symbol: string,
  terms: GroupInstrumentTerms,
) {
  return em.transactional(async (tx) => {
    // The group row is locked, so puts of one group take turns: two first puts of a pair at
    // once would otherwise both find no row and both insert it, the second failing on the key.
    // Clones lock the same row, so a clone also copies the rows of one moment.
    const group = await tx.findOne(Group, groupId, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!group) throw errors.notFound('Group');
    const instrument = await findInstrument(tx, symbol);
    let row = await tx.findOne(GroupInstrument, { group: groupId, instrument: instrument.id });
    const before = row ? groupInstrumentView(row, symbol) : null;
    const values = {
      enabled: terms.enabled,
      spread: decText(terms.spread),
      commissionValue:
        terms.commission_value === undefined || terms.commission_value === null ? null : decText(terms.commission_value),
      swapLong: decText(terms.swap_long),
      swapShort: decText(terms.swap_short),
    };
    if (row) tx.assign(row, { ...values, updatedAt: new Date() });
    else row = tx.create(GroupInstrument, { group, instrument, ...values });
    // Flushed before the answer is built, so the answer shows the stored updated_at (the
    // entity's onUpdate hook sets it again at flush, a few ms after the assign above).
    await tx.flush();
    const after = groupInstrumentView(row, symbol);
    recordAudit(tx, actor, {
      action: before ? 'group_instrument.updated' : 'group_instrument.created',
      entityType: 'group',
      entityId: groupId,
      before,
      after,
    });
    return { view: after, created: before === null };
  });
}

export async function listGroupInstruments(em: EntityManager, groupId: string) {
  if (!(await em.findOne(Group, groupId, { fields: ['id'] }))) throw errors.notFound('Group');
  const rows = await em.find(
    GroupInstrument,
    { group: groupId },
    { populate: ['instrument'], orderBy: { instrument: { symbol: 'asc' } } },
  );
  return rows.map((r) => groupInstrumentView(r, r.instrument.getEntity().symbol));
}

export async function deleteGroupInstrument(
  em: EntityManager,
  actor: StaffCaller,
  groupId: string,
  symbol: string,
): Promise<void> {
  await em.transactional(async (tx) => {
    const instrument = await tx.findOne(Instrument, { symbol });
    const row = instrument && (await tx.findOne(GroupInstrument, { group: groupId, instrument: instrument.id }));
    if (!row) throw errors.notFound('Group instrument');
    recordAudit(tx, actor, {
      action: 'group_instrument.deleted',
      entityType: 'group',
      entityId: groupId,
      before: groupInstrumentView(row, symbol),
    });
    tx.remove(row);
  });
}
