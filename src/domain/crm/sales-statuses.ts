import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Customer } from '../../entities/customer.entity';
import { SalesStatus } from '../../entities/sales-status.entity';
import type { StaffCaller } from '../../platform/caller';
import { errors, fieldError } from '../../platform/errors';
import { recordAudit } from '../audit/audit';

export const SalesStatusSchema = z
  .object({
    key: z
      .string()
      .regex(/^[a-z][a-z0-9_]{0,63}$/, { message: 'A key is 1 to 64 of a-z 0-9 _ starting with a letter' })
      .describe('What customers name in `sales_status`'),
    name: z.string().trim().min(1).max(100),
    position: z
      .int()
      .min(0)
      .max(10_000)
      .meta({ examples: [1] })
      .describe('Order in which the stages are shown'),
    is_final: z.boolean().describe('Whether the stage ends the sales process (won or lost)'),
  })
  .meta({ id: 'SalesStatus' });
export type SalesStatusView = z.output<typeof SalesStatusSchema>;

export const SalesStatusListSchema = z.array(SalesStatusSchema).max(100);

function view(s: SalesStatus): SalesStatusView {
  return { key: s.key, name: s.name, position: s.position, is_final: s.isFinal };
}

export async function listSalesStatuses(em: EntityManager): Promise<SalesStatusView[]> {
  return (await em.find(SalesStatus, {}, { orderBy: { position: 'asc', key: 'asc' } })).map(view);
}

/**
 * Replaces the list. A key used twice is 422; a key left out that a customer still has is 409
 * SALES_STATUS_IN_USE, and nothing changes. Audited with the list before and after.
 */
export async function replaceSalesStatuses(
  em: EntityManager,
  actor: StaffCaller,
  list: SalesStatusView[],
): Promise<SalesStatusView[]> {
  const keys = list.map((s) => s.key);
  const repeated = keys.findIndex((k, i) => keys.indexOf(k) !== i);
  if (repeated >= 0) throw fieldError('body', [repeated, 'key'], 'This key is already in the list');
  return em.transactional(async (tx) => {
    const current = await tx.find(SalesStatus, {}, { orderBy: { position: 'asc', key: 'asc' } });
    const removed = current.map((s) => s.key).filter((k) => !keys.includes(k));
    if (removed.length) {
      const inUse = await tx.findOne(Customer, { salesStatus: { $in: removed } }, { fields: ['salesStatus'] });
      if (inUse)
        throw errors.conflict(
          'SALES_STATUS_IN_USE',
          `Customers still have the sales status "${inUse.salesStatus}": move them first`,
        );
      await tx.nativeDelete(SalesStatus, { key: { $in: removed } });
    }
    const byKey = new Map(current.map((s) => [s.key, s]));
    for (const s of list) {
      const row =
        byKey.get(s.key) ??
        tx.create(SalesStatus, { key: s.key, name: s.name, position: s.position, isFinal: s.is_final, updatedAt: new Date() });
      row.name = s.name;
      row.position = s.position;
      row.isFinal = s.is_final;
      row.updatedAt = new Date();
    }
    const after = [...list].sort((a, b) => a.position - b.position || a.key.localeCompare(b.key));
    recordAudit(tx as EntityManager, actor, {
      action: 'sales_statuses.updated',
      entityType: 'sales_statuses',
      before: { items: current.map(view) },
      after: { items: after },
    });
    return after;
  });
}
