import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Account } from '../../entities/account.entity';
import { errors } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import type { StaffCaller } from '../../platform/caller';
import { cancelPendingOfDisabledAccounts } from './pending-orders';

/** PATCH /api/crm/accounts/{login}: only the fields sent change. */
export const AccountPatchSchema = z.object({
  trading_disabled: z
    .boolean()
    .optional()
    .describe(
      'false re-enables trading a risk rule (or staff) disabled; true disables it and cancels the pending orders with reason trading_disabled',
    ),
});
export type AccountPatch = z.output<typeof AccountPatchSchema>;

/**
 * Staff switch trading on or off, audited `account.updated` with the
 * flag before and after. Disabling commits first, then the waiting pending orders are
 * cancelled in a transaction of their own (orders before accounts, the engine's lock order):
 * from the commit on no order can be placed or filled on the account, so the sweep sees
 * every order that could still be waiting.
 */
export async function updateAccount(em: EntityManager, actor: StaffCaller, login: number, patch: AccountPatch): Promise<Account> {
  const account = await em.transactional(async (tx) => {
    const found = await tx.findOne(Account, { login: String(login) }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!found) throw errors.notFound('Account');
    const before = { trading_disabled: found.tradingDisabled };
    if (patch.trading_disabled !== undefined && patch.trading_disabled !== found.tradingDisabled) {
      found.tradingDisabled = patch.trading_disabled;
      found.updatedAt = new Date();
    }
    recordAudit(tx, actor, {
      action: 'account.updated',
      entityType: 'account',
      entityId: found.login,
      before,
      after: { trading_disabled: found.tradingDisabled },
    });
    return found;
  });
  if (account.tradingDisabled) await cancelPendingOfDisabledAccounts(em, [account.id]);
  return em.findOneOrFail(Account, account.id, { populate: ['group'] });
}
