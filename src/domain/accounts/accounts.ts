import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account, type AccountKind } from '../../entities/account.entity';
import type { Customer } from '../../entities/customer.entity';
import { Group } from '../../entities/group.entity';
import { dec, type Dec } from '../../platform/decimal';
import { AppError, errors, fieldError, type ValidationFailure } from '../../platform/errors';
import { inScopeOr404, type CustomerScope } from '../../platform/customer-scope';
import { CurrencyConverter } from '../prices/conversion';
import type { QuoteStore } from '../prices/quote-store';

export const WALLET_CURRENCY = 'USD';

/** Every customer gets one wallet account (deposits and withdrawals go through it). */
export function openWallet(em: EntityManager, customer: Customer): Account {
  return em.create(Account, { customer, kind: 'wallet', currency: WALLET_CURRENCY });
}

/**
 * Money in an account must be able to reach the wallet (USD) and back: an account currency
 * needs a quoted symbol joining it to USD, either way round (EURUSD or USDJPY), the path every
 * transfer and profit conversion into or out of it takes. Checked at the current quotes, the
 * rule transfers apply; a quote that disappears later makes transfers wait for it (422), it
 * never strands a balance the account already holds.
 */
export async function assertQuotePathToUsd(
  em: EntityManager,
  quotes: QuoteStore,
  currency: string,
  given: boolean,
): Promise<void> {
  if (currency === WALLET_CURRENCY) return;
  // One symbol serves both directions (x bid one way, / ask the other).
  if (await CurrencyConverter.dealerRateBetween(em, quotes, currency, WALLET_CURRENCY)) return;
  throw fieldError(
    'body',
    ['currency'],
    `${given ? 'The currency' : "The group's currency"} ${currency} has no quoted symbol joining it to USD (${currency}USD or USD${currency}), so money could not be converted into or out of the account`,
  );
}

export async function openTradingAccount(
  em: EntityManager,
  quotes: QuoteStore,
  customer: Customer,
  input: { kind: Exclude<AccountKind, 'wallet'>; group_id: string; currency?: string | undefined; leverage?: number | undefined },
): Promise<Account> {
  // A closed customer keeps its accounts (and may still withdraw), but opens no new one.
  if (customer.lifecycle === 'closed') throw errors.conflict('CUSTOMER_CLOSED', 'The customer is closed: no new accounts');
  const group = await em.findOne(Group, input.group_id);
  if (!group) throw fieldError('body', ['group_id'], 'No such group');
  if (!group.isActive) throw fieldError('body', ['group_id'], 'The group is not active');
  const currency = input.currency ?? group.currency;
  await assertQuotePathToUsd(em, quotes, currency, input.currency !== undefined);
  const account = em.create(Account, {
    customer,
    kind: input.kind,
    group,
    currency,
    leverage: input.leverage ?? null,
  });
  await em.flush();
  // The login comes from the database sequence.
  await em.refresh(account);
  return account;
}

/**
 * Orders are for trading accounts only. The wallet has no group, so an order on it would
 * trade with no spread, leverage 1 and none of a group's disabled instruments: refused. An
 * account a risk rule disabled takes no new orders (its open ones can still be closed).
 */
export function assertTradingAccount(account: Account): void {
  const refusal = tradingRefusal(account);
  if (refusal) throw refusal;
}

/** Why assertTradingAccount refuses, as a value (a pending order's fill is cancelled with it), or null. */
export function tradingRefusal(account: Pick<Account, 'kind' | 'tradingDisabled'>): AppError | ValidationFailure | null {
  if (account.kind === 'wallet')
    return fieldError('body', ['login'], 'The wallet account does not trade: use a live, demo or prop account');
  if (account.tradingDisabled)
    return new AppError(
      403,
      'TRADING_DISABLED',
      'Trading is disabled on this account (by a risk rule or a failed prop challenge): no new orders',
    );
  return null;
}

export async function findAccountByLogin(em: EntityManager, login: number | string): Promise<Account | null> {
  return em.findOne(Account, { login: String(login) }, { populate: ['group'] });
}

/** The account if it is within the caller's scope (see CustomerScope); otherwise 404, as if absent. */
export async function accessibleAccount(em: EntityManager, login: number | string, scope: CustomerScope): Promise<Account> {
  return inScopeOr404(scope, await findAccountByLogin(em, login), (a) => a.customer.id, 'Account');
}

/**
 * Locks accounts for a balance change, always in ascending id order, so two transactions
 * touching the same pair of accounts cannot deadlock.
 */
export async function lockAccounts(em: EntityManager, ids: string[]): Promise<Map<string, Account>> {
  const sorted = [...new Set(ids)].sort();
  const locked = new Map<string, Account>();
  for (const id of sorted) {
    const account = await em.findOne(Account, id, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (account) locked.set(id, account);
  }
  return locked;
}

/**
 * What an account holds that nothing reserves: its balance less what pending withdrawals or
 * payouts hold. The base of what a wallet may withdraw or transfer and a prop account pay out.
 */
export function unreserved(account: { balance: string; reserved: string }): Dec {
  return dec(account.balance).minus(account.reserved);
}
