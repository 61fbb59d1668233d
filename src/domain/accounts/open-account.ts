import type { EntityManager } from '@mikro-orm/postgresql';
import { Customer } from '../../entities/customer.entity';
import { errors } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import type { StaffCaller } from '../../platform/caller';
import type { QuoteStore } from '../prices/quote-store';
import { openTradingAccount } from './accounts';
import { accountView, type AccountView } from './account-view';

/** Staff open a trading account for a customer: the account, and its audit row in the same unit of work. */
export async function openCustomerAccount(
  em: EntityManager,
  quotes: QuoteStore,
  actor: StaffCaller,
  customerId: string,
  input: Parameters<typeof openTradingAccount>[3],
): Promise<AccountView> {
  const customer = await em.findOne(Customer, customerId);
  if (!customer) throw errors.notFound('Customer');
  const account = await openTradingAccount(em, quotes, customer, input);
  const view = await accountView(em, quotes, account);
  recordAudit(em, actor, { action: 'account.opened', entityType: 'account', entityId: String(view.login), after: view });
  await em.flush();
  return view;
}
