import { z } from 'zod';
import { accessibleAccount } from '../../domain/accounts/accounts';
import { openCustomerAccount } from '../../domain/accounts/open-account';
import { AccountPatchSchema, updateAccount } from '../../domain/orders/account-trading';
import { AccountSchema, accountView } from '../../domain/accounts/account-view';
import { LedgerSchema, ledgerView } from '../../domain/ledger/ledger';
import { DepositSchema, depositFunds } from '../../domain/money/deposits';
import { CurrencyCode } from '../../platform/money-text';
import { Account } from '../../entities/account.entity';
import { LedgerEntry } from '../../entities/ledger-entry.entity';
import { asCustomer, asStaff } from '../http/access';
import { LoginText, MoneyAmount } from '../http/amounts';
import { findPage, type Paging } from '../../db/find-page';
import type { QuoteStore } from '../../domain/prices/quote-store';
import type { EntityManager } from '@mikro-orm/postgresql';
import { pageQuery, pageSchema } from '../http/paging';
import { defineRoute, json, type RouteSpec } from '../http/route';
import { customerScopeOf, ownerInScopeOr404 } from '../../platform/customer-scope';

const LoginParam = z.object({ login: LoginText });

/** A page of a customer's accounts by login, each valued at the latest quotes. */
async function accountPage(em: EntityManager, quotes: QuoteStore, customerId: string, paging: Paging) {
  const page = await findPage(
    em,
    Account,
    { customer: customerId },
    paging,
    { populate: ['group'], orderBy: { login: 'asc' } },
    (a) => a,
  );
  return { ...page, items: await Promise.all(page.items.map((a) => accountView(em, quotes, a))) };
}

export const accountRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/api/crm/customers/{customer_id}/accounts',
    operationId: 'openAccount',
    summary: 'Open a trading account (live, demo or prop) in a group',
    description:
      'The login comes from a database sequence. Currency defaults to the group currency, leverage to the group default. ' +
      'A currency other than USD needs a quoted symbol joining it to USD (for example EURUSD or USDJPY), the path transfers ' +
      'to and from the USD wallet convert through: without one it is 422 at `currency`.',
    tags: ['accounts'],
    access: { kind: 'staff', permission: 'manage_accounts' },
    params: z.object({ customer_id: z.uuid() }),
    body: z.object({
      kind: z.enum(['live', 'demo', 'prop']),
      group_id: z.uuid(),
      currency: CurrencyCode.optional(),
      leverage: z.int().min(1).max(1000).optional(),
    }),
    responses: { 201: { description: 'Opened', schema: AccountSchema }, 404: { description: 'No such customer' } },
    handler: async ({ params, body, em, services, caller }) => {
      await ownerInScopeOr404(em, customerScopeOf(caller), 'customers', params.customer_id, 'Customer');
      return json(201, await openCustomerAccount(em, services.quotes, asStaff(caller), params.customer_id, body));
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
    query: z.object(pageQuery()),
    responses: { 200: { description: 'A page of accounts by login', schema: pageSchema(AccountSchema) } },
    handler: async ({ params, query, em, services, caller }) => {
      await ownerInScopeOr404(em, customerScopeOf(caller), 'customers', params.customer_id, 'Customer');
      return json(200, await accountPage(em, services.quotes, params.customer_id, query));
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
    handler: async ({ params, em, services, caller }) =>
      json(200, await accountView(em, services.quotes, await accessibleAccount(em, params.login, customerScopeOf(caller)))),
  }),
  defineRoute({
    method: 'patch',
    path: '/api/crm/accounts/{login}',
    operationId: 'updateAccount',
    summary: "Change an account's trading switch",
    description:
      '`{"trading_disabled": false}` re-enables trading that a risk rule or staff disabled; `true` disables it: new ' +
      'orders are 403 `TRADING_DISABLED` and every waiting pending order is cancelled with `cancel_reason` ' +
      '`trading_disabled` (the engine never fills one on a disabled account). Open positions stay and can be closed. ' +
      'Audited (`account.updated`, the flag before and after).',
    tags: ['accounts'],
    access: { kind: 'staff', permission: 'manage_accounts' },
    params: LoginParam,
    body: AccountPatchSchema,
    responses: { 200: { description: 'The account after the change', schema: AccountSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, body, em, services, caller }) => {
      await accessibleAccount(em, params.login, customerScopeOf(caller));
      return json(
        200,
        await accountView(em, services.quotes, await updateAccount(em, asStaff(caller), Number(params.login), body)),
      );
    },
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/accounts',
    operationId: 'listMyAccounts',
    summary: "The calling customer's accounts",
    tags: ['accounts'],
    access: { kind: 'customer' },
    query: z.object(pageQuery()),
    responses: { 200: { description: 'A page of accounts by login', schema: pageSchema(AccountSchema) } },
    handler: async ({ query, em, services, caller }) =>
      json(200, await accountPage(em, services.quotes, asCustomer(caller).customerId, query)),
  }),
  defineRoute({
    method: 'post',
    path: '/api/backoffice/accounts/{login}/deposits',
    operationId: 'createDeposit',
    summary: 'Credit an account',
    description:
      'Accepts an Idempotency-Key header: the same key and body within 24 hours replays the first answer; another body is 422; while the first is in flight, 409.',
    tags: ['money'],
    idempotent: true,
    access: { kind: 'staff', permission: 'manage_accounts' },
    params: LoginParam,
    body: z.strictObject({ amount: MoneyAmount, comment: z.string().max(500).optional() }),
    responses: {
      201: { description: 'Deposited', schema: DepositSchema },
      404: { description: 'No such account' },
    },
    handler: async ({ params, body, em, caller }) => {
      const account = await accessibleAccount(em, params.login, customerScopeOf(caller));
      return json(201, await depositFunds(em, asStaff(caller), account, body.amount, body.comment));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/backoffice/accounts/{login}/ledger',
    operationId: 'listAccountLedger',
    summary: "An account's ledger, latest booking first (by seq)",
    tags: ['money'],
    access: { kind: 'staff', permission: 'view_customers' },
    params: LoginParam,
    query: z.object(pageQuery()),
    responses: { 200: { description: 'A page of ledger rows', schema: pageSchema(LedgerSchema) } },
    handler: async ({ params, query, em, caller }) => {
      const account = await accessibleAccount(em, params.login, customerScopeOf(caller));
      return json(200, await findPage(em, LedgerEntry, { account: account.id }, query, { orderBy: { seq: 'desc' } }, ledgerView));
    },
  }),
];
