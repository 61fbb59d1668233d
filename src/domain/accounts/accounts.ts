import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account, type AccountKind } from '../../entities/account.entity';
import type { Customer } from '../../entities/customer.entity';
import { Group } from '../../entities/group.entity';
import { errors, fieldError } from '../../platform/errors';

export const WALLET_CURRENCY = 'USD';

/** Every customer gets one wallet account (deposits and withdrawals go through it). */
export function openWallet(em: EntityManager, customer: Customer): Account {
  return em.create(Account, { customer, kind: 'wallet', currency: WALLET_CURRENCY });
}

export async function openTradingAccount(
  em: EntityManager,
  customer: Customer,
  input: { kind: Exclude<AccountKind, 'wallet'>; group_id: string; currency?: string | undefined; leverage?: number | undefined },
): Promise<Account> {
  const group = await em.findOne(Group, input.group_id);
  if (!group) throw fieldError('body', ['group_id'], 'No such group');
  if (!group.isActive) throw fieldError('body', ['group_id'], 'The group is not active');
  const account = em.create(Account, {
    customer,
    kind: input.kind,
    group,
    currency: input.currency ?? group.currency,
    leverage: input.leverage ?? null,
  });
  await em.flush();
  // The login comes from the database sequence.
  await em.refresh(account);
  return account;
}

/**
 * Orders are for trading accounts only. The wallet has no group, so an order on it would
 * trade with no spread, leverage 1 and none of a group's disabled instruments: refused.
 */
export function assertTradingAccount(account: Account): void {
  if (account.kind === 'wallet')
    throw fieldError('body', ['login'], 'The wallet account does not trade: use a live, demo or prop account');
}

export async function findAccountByLogin(em: EntityManager, login: number | string): Promise<Account | null> {
  return em.findOne(Account, { login: String(login) }, { populate: ['group'] });
}

/** The account if the caller may see it: staff see all, a customer only its own (others are 404). */
export async function accessibleAccount(
  em: EntityManager,
  login: number | string,
  customerId: string | undefined,
): Promise<Account> {
  const account = await findAccountByLogin(em, login);
  if (!account || (customerId !== undefined && account.customer.id !== customerId)) throw errors.notFound('Account');
  return account;
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
