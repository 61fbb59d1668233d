import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { ACCOUNT_KINDS, type Account } from '../../entities/account.entity';
import { CurrencyCode, MoneyText } from '../../platform/money-text';
import { loadMetrics } from './account-metrics';
import type { QuoteStore } from '../prices/quote-store';

/** An account as staff and its customer see it. */
export const AccountSchema = z.object({
  login: z.int(),
  kind: z.enum(ACCOUNT_KINDS),
  currency: CurrencyCode,
  balance: MoneyText.describe('Withdrawable money: deposits, profits and released bonuses, less losses'),
  credit: MoneyText.describe(
    'The non-withdrawable bucket (an active bonus, a broker credit): counts in equity and margin, never leaves the account',
  ),
  equity: MoneyText.describe('Balance plus credit plus floating profit at current quotes'),
  margin: MoneyText,
  free_margin: MoneyText,
  group_id: z.uuid().nullable(),
  leverage: z.int().nullable(),
  customer_id: z.uuid(),
  trading_disabled: z
    .boolean()
    .describe('New orders are refused (403 TRADING_DISABLED) and pending orders cancelled; staff can re-enable it'),
  created_at: z.iso.datetime(),
});
export type AccountView = z.output<typeof AccountSchema>;

/** An account with balance, equity, margin and free margin from its open orders at current quotes. */
export async function accountView(em: EntityManager, quotes: QuoteStore, account: Account): Promise<AccountView> {
  const m = await loadMetrics(em, quotes, account);
  return {
    login: Number(account.login),
    kind: account.kind,
    currency: account.currency,
    balance: m.balance.toFixed(2),
    credit: m.credit.toFixed(2),
    equity: m.equity.toFixed(2),
    margin: m.margin.toFixed(2),
    free_margin: m.free_margin.toFixed(2),
    group_id: account.group?.id ?? null,
    leverage: account.leverage ?? account.group?.getEntity().defaultLeverage ?? null,
    customer_id: account.customer.id,
    trading_disabled: account.tradingDisabled,
    created_at: account.createdAt.toISOString(),
  };
}
