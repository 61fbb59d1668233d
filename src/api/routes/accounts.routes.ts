import { z } from 'zod';
import { accessibleAccount, openTradingAccount } from '../../domain/accounts/accounts';
import { recordAudit } from '../../domain/audit/audit';
import { depositFunds } from '../../domain/money/deposits';
import { loadMetrics } from '../../domain/orders/market-orders';
import type { QuoteStore } from '../../domain/prices/quote-store';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../../entities/account.entity';
import { Customer } from '../../entities/customer.entity';
import { LedgerEntry } from '../../entities/ledger-entry.entity';
import { errors } from '../../platform/errors';
import { asCustomer, asStaff } from '../http/access';
import { LoginQuery, MoneyAmount } from '../http/amounts';
import { findPage, pageQuery, pageSchema } from '../http/paging';
import { defineRoute, json, type RouteSpec } from '../http/route';

export const AccountSchema = z.object({
  login: z.int(),
  kind: z.enum(['wallet', 'live', 'demo', 'prop']),
  currency: z.string(),
  balance: z.string().describe('Decimal text'),
  equity: z.string().describe('Balance plus floating profit at current quotes'),
  margin: z.string(),
  free_margin: z.string(),
  group_id: z.uuid().nullable(),
  leverage: z.int().nullable(),
  customer_id: z.uuid(),
  created_at: z.iso.datetime(),
});

const LedgerSchema = z.object({
  id: z.uuid(),
  kind: z.string(),
  amount: z.string(),
  balance_after: z.string(),
  reference_type: z.string().nullable(),
  reference_id: z.string().nullable(),
  comment: z.string().nullable(),
  created_at: z.iso.datetime(),
});

/** An account with balance, equity, margin and free margin from its open orders at current quotes. */
export async function accountView(em: EntityManager, quotes: QuoteStore, account: Account) {
  const m = await loadMetrics(em, quotes, account);
  return {
    login: Number(account.login),
    kind: account.kind,
    currency: account.currency,
    balance: m.balance.toFixed(2),
    equity: m.equity.toFixed(2),
    margin: m.margin.toFixed(2),
    free_margin: m.free_margin.toFixed(2),
    group_id: account.group?.id ?? null,
    leverage: account.leverage ?? account.group?.getEntity().defaultLeverage ?? null,
    customer_id: account.customer.id,
    created_at: account.createdAt.toISOString(),
  };
}

const LoginParam = z.object({ login: LoginQuery });

export const accountRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/api/crm/customers/{customer_id}/accounts',
    operationId: 'openAccount',
    summary: 'Open a trading account (live, demo or prop) in a group',
    description:
      'The login comes from a database sequence. Currency defaults to the group currency, leverage to the group default.',
    tags: ['accounts'],
    access: { kind: 'staff', permission: 'manage_accounts' },
    params: z.object({ customer_id: z.uuid() }),
    body: z.object({
      kind: z.enum(['live', 'demo', 'prop']),
      group_id: z.uuid(),
      currency: z
        .string()
        .regex(/^[A-Z]{3}$/)
        .optional(),
      leverage: z.int().min(1).max(1000).optional(),
    }),
    responses: { 201: { description: 'Opened', schema: AccountSchema }, 404: { description: 'No such customer' } },
    handler: async ({ params, body, em, services, caller }) => {
      const customer = await em.findOne(Customer, params.customer_id);
      if (!customer) throw errors.notFound('Customer');
      const account = await openTradingAccount(em, customer, body);
      const view = await accountView(em, services.quotes, account);
      recordAudit(em, asStaff(caller), {
        action: 'account.opened',
        entityType: 'account',
        entityId: String(view.login),
        after: view,
      });
      await em.flush();
      return json(201, view);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/customers/{customer_id}/accounts',
    operationId: 'listCustomerAccounts',
    summary: "A customer's accounts",
    tags: ['accounts'],
    access: { kind: 'staff', permission: 'view_customers' },
    params: z.object({ customer_id: z.uuid() }),
    responses: { 200: { description: 'Accounts by login', schema: z.object({ items: z.array(AccountSchema) }) } },
    handler: async ({ params, em, services }) => {
      if (!(await em.findOne(Customer, params.customer_id, { fields: ['id'] }))) throw errors.notFound('Customer');
      const accounts = await em.find(
        Account,
        { customer: params.customer_id },
        { populate: ['group'], orderBy: { login: 'asc' } },
      );
      return json(200, { items: await Promise.all(accounts.map((a) => accountView(em, services.quotes, a))) });
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/accounts/{login}',
    operationId: 'getAccount',
    summary: 'One account with equity and margin at current quotes',
    tags: ['accounts'],
    access: { kind: 'staff', permission: 'view_customers' },
    params: LoginParam,
    responses: { 200: { description: 'The account', schema: AccountSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, em, services }) =>
      json(200, await accountView(em, services.quotes, await accessibleAccount(em, params.login, undefined))),
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/accounts',
    operationId: 'myAccounts',
    summary: "The calling customer's accounts",
    tags: ['accounts'],
    access: { kind: 'customer' },
    responses: { 200: { description: 'Accounts by login', schema: z.object({ items: z.array(AccountSchema) }) } },
    handler: async ({ em, services, caller }) => {
      const accounts = await em.find(
        Account,
        { customer: asCustomer(caller).customerId },
        { populate: ['group'], orderBy: { login: 'asc' } },
      );
      return json(200, { items: await Promise.all(accounts.map((a) => accountView(em, services.quotes, a))) });
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/backoffice/accounts/{login}/deposits',
    operationId: 'deposit',
    summary: 'Credit an account',
    description:
      'Accepts an Idempotency-Key header: the same key and body within 24 hours replays the first answer; another body is 422; while the first is in flight, 409.',
    tags: ['money'],
    idempotent: true,
    access: { kind: 'staff', permission: 'manage_accounts' },
    params: LoginParam,
    body: z.object({ amount: MoneyAmount, comment: z.string().max(500).optional() }),
    responses: {
      201: {
        description: 'Deposited',
        schema: z.object({
          id: z.uuid(),
          login: z.int(),
          amount: z.string(),
          currency: z.string(),
          balance: z.string(),
          comment: z.string().nullable(),
          created_at: z.iso.datetime(),
        }),
      },
      404: { description: 'No such account' },
    },
    handler: async ({ params, body, em, caller }) => {
      const account = await accessibleAccount(em, params.login, undefined);
      return json(201, await depositFunds(em, asStaff(caller), account, body.amount, body.comment));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/backoffice/accounts/{login}/ledger',
    operationId: 'accountLedger',
    summary: "An account's ledger, newest first",
    tags: ['money'],
    access: { kind: 'staff', permission: 'view_customers' },
    params: LoginParam,
    query: z.object(pageQuery(200, 50)),
    responses: { 200: { description: 'A page of ledger rows', schema: pageSchema(LedgerSchema) } },
    handler: async ({ params, query, em }) => {
      const account = await accessibleAccount(em, params.login, undefined);
      return json(
        200,
        await findPage(em, LedgerEntry, { account: account.id }, query, { orderBy: { createdAt: 'desc', id: 'desc' } }, (r) => ({
          id: r.id,
          kind: r.kind,
          amount: r.amount,
          balance_after: r.balanceAfter,
          reference_type: r.referenceType ?? null,
          reference_id: r.referenceId ?? null,
          comment: r.comment ?? null,
          created_at: r.createdAt.toISOString(),
        })),
      );
    },
  }),
];
