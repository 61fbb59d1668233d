import { customerScopeOf, ownerInScopeOr404 } from '../../platform/customer-scope';
import { customersInScope } from '../../domain/customers/customers';
import type { FilterQuery } from '@mikro-orm/core';
import { z } from 'zod';
import { listCustomerTransactions, TransactionSchema } from '../../domain/money/transactions';
import { TransferSchema, transferFunds } from '../../domain/money/transfers';
import { assertMayTrade } from '../../domain/compliance/limits';
import {
  decideWithdrawal,
  PAYMENT_DATA_MAX_BYTES,
  requestWithdrawal,
  WithdrawalDetailSchema,
  withdrawalDetailView,
  WithdrawalRequestResultSchema,
  WithdrawalSchema,
  withdrawalView,
} from '../../domain/money/withdrawals';
import { Withdrawal, WITHDRAWAL_STATUSES } from '../../entities/withdrawal.entity';
import { errors } from '../../platform/errors';
import { asCustomer, asStaff } from '../http/access';
import { Login, LoginText, MoneyAmount } from '../http/amounts';
import { findPage } from '../../db/find-page';
import { pageQuery, pageSchema } from '../http/paging';
import { defineRoute, json, type RouteSpec } from '../http/route';
import { NoFields } from '../http/strict-body';

const IDEMPOTENT =
  'Accepts an Idempotency-Key header: the same key and body within 24 hours replays the first answer ' +
  '(`Idempotent-Replayed: true`); another body is 422; while the first is in flight, 409.';

/** A login in a body: the spec types it as text, JSON clients send integers; both are taken. */
const LoginInBody = z
  .union([Login, LoginText])
  .describe('A login of one of your accounts: digits as text ("100001") or a JSON integer (100001)');

const PaymentData = z
  .record(z.string(), z.unknown())
  .refine((v) => Buffer.byteLength(JSON.stringify(v), 'utf8') <= PAYMENT_DATA_MAX_BYTES, {
    message: `payment_data must be at most ${PAYMENT_DATA_MAX_BYTES} bytes as JSON`,
    params: { type: 'value_error' },
  })
  .describe(
    `Where the money goes (bank details, a card token...): a JSON object of at most ${PAYMENT_DATA_MAX_BYTES} bytes, ` +
      'stored as given and shown only to staff who approve withdrawals; never echoed, logged or sent in events.',
  );

const WithdrawalIdParam = z.object({ transaction_id: z.uuid() });

export const moneyRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/customers/me/transfer',
    operationId: 'transferBetweenMyAccounts',
    summary: 'Move money between two of your accounts, converting at the latest quotes',
    description:
      "Both logins must be yours (another customer's login is 404, exactly as one that does not exist) and different; " +
      'money moves between the wallet and live accounts (demo and prop accounts are 422). `amount` is in the source ' +
      "account's currency, more than 0 with at most 2 decimals, and at most what the source can give: the wallet's " +
      "balance less its pending withdrawals; a live account's free margin at current quotes, never more than its " +
      'balance (422 at `amount`).\n\n' +
      'Conversion uses the latest quote of the symbol joining the two currencies, on the side a dealer quotes you: ' +
      'with the symbol FROMTO, amount x bid; with TOFROM, amount / ask; otherwise through USD, each leg so; rounded ' +
      'down (toward zero) to 2 decimals once, at the end, so no round trip gains. `source` names the symbol(s) ' +
      'used (comma-separated when crossed) or `identity`; `effective_rate` is converted_amount / amount. No quote ' +
      'path between the currencies is 422 at `to_login`. Group spreads do not apply to conversions.\n\n' +
      'Synchronous: the answer comes once both legs are booked (`status` `completed`). The logins come back as text ' +
      'and the amounts as JSON numbers, as the specification types them; `GET /customers/me/transactions` lists the ' +
      'two ledger rows (ids `transfer_out_id` and `transfer_in_id`) with their amounts as decimal text. ' +
      IDEMPOTENT,
    tags: ['money'],
    idempotent: true,
    access: { kind: 'customer' },
    body: z.strictObject({
      from_login: LoginInBody,
      to_login: LoginInBody,
      amount: MoneyAmount,
      accept_bonus_forfeit: z
        .boolean()
        .optional()
        .describe('Confirms the bonus forfeiture quoted by a 409 BONUS_FORFEIT_UNCONFIRMED'),
    }),
    responses: {
      200: { description: 'Transferred', schema: TransferSchema },
      409: {
        description:
          'BONUS_FORFEIT_UNCONFIRMED: the source holds an active bonus; the body carries `forfeit` `{"bonus_id", "amount"}`, ' +
          'the credit this transfer would forfeit. Repeat with `accept_bonus_forfeit: true` to proceed (ACCOUNT_NEGATIVE: a wallet below zero)',
      },
      403: {
        description:
          "VERIFICATION_REQUIRED: the customer's verification level may not trade (or FORBIDDEN: a token without the permission)",
      },
      404: { description: 'Not one of your accounts' },
    },
    handler: async ({ body, em, services, caller }) => {
      const customerId = asCustomer(caller).customerId;
      await assertMayTrade(em, services.verificationLevels, customerId);
      return json(200, await transferFunds(em, services.quotes, customerId, body));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/customers/me/withdraw',
    operationId: 'requestWithdrawal',
    summary: 'Ask to withdraw money from your wallet',
    description:
      'Withdrawals draw on the wallet (move money from a trading account with a transfer first). The amount is ' +
      'reserved at once, so it can no longer be transferred or withdrawn twice, and the request waits for staff ' +
      '(202, `status` `pending`); `max_withdrawable` is what remains withdrawable after it. More than the wallet ' +
      'can give (its balance less its pending withdrawals) is 422 at `amount`. ' +
      IDEMPOTENT,
    tags: ['withdrawals'],
    idempotent: true,
    access: { kind: 'customer' },
    body: z.strictObject({
      amount: MoneyAmount,
      payment_data: PaymentData,
      comment: z.string().max(500).optional(),
    }),
    responses: {
      202: { description: 'Accepted, awaiting approval', schema: WithdrawalRequestResultSchema, example: { status: 'pending' } },
      403: {
        description:
          "VERIFICATION_REQUIRED: the customer's verification level may not withdraw (or FORBIDDEN: a token without the permission)",
      },
      404: { description: 'The caller has no wallet' },
    },
    handler: async ({ body, em, caller }) => json(202, await requestWithdrawal(em, asCustomer(caller).customerId, body)),
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/withdrawals',
    operationId: 'listMyWithdrawals',
    summary: 'Your withdrawal requests, newest first',
    tags: ['withdrawals'],
    access: { kind: 'customer' },
    query: z.object({ status: z.enum(WITHDRAWAL_STATUSES).optional(), ...pageQuery() }),
    responses: { 200: { description: 'A page of withdrawals', schema: pageSchema(WithdrawalSchema) } },
    handler: async ({ query, em, caller }) => {
      const where: FilterQuery<Withdrawal> = { customer: asCustomer(caller).customerId };
      if (query.status) where.status = query.status;
      return json(
        200,
        await findPage(em, Withdrawal, where, query, { orderBy: { createdAt: 'desc', id: 'desc' } }, withdrawalView),
      );
    },
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/transactions',
    operationId: 'listMyTransactions',
    summary: 'The ledger of your accounts, newest booking first',
    description:
      'Every balance change of your accounts (deposits, transfers, withdrawals, trade results), or of one of them ' +
      "with `login` (another customer's login is 404). Ordered by booking (`seq`), newest first; amounts are " +
      'decimal text in the account currency, signed.',
    tags: ['money'],
    access: { kind: 'customer' },
    query: z.object({ login: LoginText.optional(), ...pageQuery() }),
    responses: {
      200: { description: 'A page of ledger rows', schema: pageSchema(TransactionSchema) },
      404: { description: 'Not one of your accounts' },
    },
    handler: async ({ query, em, caller }) => json(200, await listCustomerTransactions(em, asCustomer(caller).customerId, query)),
  }),
  defineRoute({
    method: 'get',
    path: '/api/backoffice/withdrawals',
    operationId: 'listWithdrawals',
    summary: 'Withdrawal requests, newest first',
    description: 'Filter by `status` and by the wallet `login`. The list never shows payment data; one withdrawal does.',
    tags: ['withdrawals'],
    access: { kind: 'staff', permission: 'approve_withdrawals' },
    query: z.object({ status: z.enum(WITHDRAWAL_STATUSES).optional(), login: LoginText.optional(), ...pageQuery() }),
    responses: { 200: { description: 'A page of withdrawals', schema: pageSchema(WithdrawalSchema) } },
    handler: async ({ query, em, caller }) => {
      const where: FilterQuery<Withdrawal> = {};
      if (query.status) where.status = query.status;
      if (query.login !== undefined) where.login = String(query.login);
      const scope = customerScopeOf(caller);
      if (scope.staff) where.customer = customersInScope(scope);
      return json(
        200,
        await findPage(em, Withdrawal, where, query, { orderBy: { createdAt: 'desc', id: 'desc' } }, withdrawalView),
      );
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/backoffice/withdrawals/{transaction_id}',
    operationId: 'getWithdrawal',
    summary: 'One withdrawal, with where to pay it',
    tags: ['withdrawals'],
    access: { kind: 'staff', permission: 'approve_withdrawals' },
    params: WithdrawalIdParam,
    responses: {
      200: { description: 'The withdrawal with its payment data', schema: WithdrawalDetailSchema },
      404: { description: 'No such withdrawal' },
    },
    handler: async ({ params, em, caller }) => {
      await ownerInScopeOr404(em, customerScopeOf(caller), 'withdrawals', params.transaction_id, 'Withdrawal');
      const withdrawal = await em.findOne(Withdrawal, params.transaction_id);
      if (!withdrawal) throw errors.notFound('Withdrawal');
      return json(200, withdrawalDetailView(withdrawal));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/backoffice/withdrawals/{transaction_id}/approve',
    operationId: 'approveWithdrawal',
    summary: 'Approve a pending withdrawal: the wallet is debited',
    description:
      'Debits the wallet through the ledger and releases the reserve (`completed`), audited. A withdrawal decides ' +
      'once: one that is no longer pending is 409 `WITHDRAWAL_NOT_PENDING`, also when an approve and a reject race. ' +
      'A retry with the same Idempotency-Key replays the first answer instead.',
    tags: ['withdrawals'],
    idempotent: true,
    access: { kind: 'staff', permission: 'approve_withdrawals' },
    params: WithdrawalIdParam,
    body: NoFields,
    responses: {
      200: { description: 'Approved', schema: WithdrawalSchema },
      404: { description: 'No such withdrawal' },
      409: { description: 'Not pending (WITHDRAWAL_NOT_PENDING)' },
    },
    handler: async ({ params, em, caller }) => {
      await ownerInScopeOr404(em, customerScopeOf(caller), 'withdrawals', params.transaction_id, 'Withdrawal');
      return json(200, await decideWithdrawal(em, asStaff(caller), params.transaction_id, { kind: 'approve' }));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/backoffice/withdrawals/{transaction_id}/reject',
    operationId: 'rejectWithdrawal',
    summary: 'Reject a pending withdrawal: the reserve is freed',
    description:
      'Releases the reserve and records the reason (`rejected`), audited. A withdrawal decides once: one that is no ' +
      'longer pending is 409 `WITHDRAWAL_NOT_PENDING`.',
    tags: ['withdrawals'],
    idempotent: true,
    access: { kind: 'staff', permission: 'approve_withdrawals' },
    params: WithdrawalIdParam,
    body: z.strictObject({ reason: z.string().min(1).max(500) }),
    responses: {
      200: { description: 'Rejected', schema: WithdrawalSchema, example: { status: 'rejected' } },
      404: { description: 'No such withdrawal' },
      409: { description: 'Not pending (WITHDRAWAL_NOT_PENDING)' },
    },
    handler: async ({ params, body, em, caller }) => {
      await ownerInScopeOr404(em, customerScopeOf(caller), 'withdrawals', params.transaction_id, 'Withdrawal');
      return json(
        200,
        await decideWithdrawal(em, asStaff(caller), params.transaction_id, { kind: 'reject', reason: body.reason }),
      );
    },
  }),
];
