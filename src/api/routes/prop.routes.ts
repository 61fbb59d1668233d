import type { FilterQuery } from '@mikro-orm/core';
import { z } from 'zod';
import { fieldError } from '../../platform/errors';
import {
  ChallengeDetailSchema,
  ChallengeSchema,
  customerChallenges,
  getChallenge,
  listChallenges,
  startChallenge,
} from '../../domain/prop/challenges';
import { CHALLENGE_STATUSES } from '../../entities/prop-challenge.entity';
import { decidePayout, PayoutSchema, payoutView, requestPayout } from '../../domain/prop/payouts';
import { assertMayWithdraw } from '../../domain/compliance/limits';
import { createProgram, ProgramInputSchema, ProgramSchema, programView } from '../../domain/prop/programs';
import { PropProgram } from '../../entities/prop-program.entity';
import { Payout, PAYOUT_STATUSES } from '../../entities/payout.entity';
import { asCustomer, asStaff } from '../http/access';
import { Login, LoginText, MoneyAmount } from '../http/amounts';
import { findPage } from '../../db/find-page';
import { pageQuery, pageSchema } from '../http/paging';
import { defineRoute, json, type RouteSpec } from '../http/route';
import { NoFields } from '../http/strict-body';
import { customerScopeOf, inScope, inScopeOr404 } from '../../platform/customer-scope';

const IDEMPOTENT =
  'Accepts an Idempotency-Key header: the same key and body within 24 hours replays the first answer ' +
  '(`Idempotent-Replayed: true`); another body is 422; while the first is in flight, 409.';

const PayoutIdParam = z.object({ payout_id: z.uuid() });

const RULES =
  'Each phase trades its own `prop` account, funded with `initial_balance` (ledger kind `challenge_funding`). The workers ' +
  'check the rules on every tick for challenge accounts with open orders and after every close: the daily loss is ' +
  'breached when equity < day start equity - initial x max_daily_loss_pct / 100 (day start equity: the larger of balance ' +
  'and equity at 00:00 UTC, at the start before the first); the total loss when equity < initial x (1 - ' +
  'max_total_loss_pct / 100) (`static`) or < the high-water mark of equity - initial x max_total_loss_pct / 100 ' +
  '(`trailing`). A breach closes every open order (reason `prop_breach`), disables trading (403 `TRADING_DISABLED`) and ' +
  'fails the stage (`prop.challenge_failed`). A phase passes when the balance reaches initial x (1 + profit_target_pct / ' +
  '100) with nothing open and at least `min_trading_days` UTC days with an order opened or closed: the next phase, or ' +
  'after the last the `funded` stage, starts on a new account (`prop.challenge_passed`). A phase still active ' +
  '`max_trading_days` days after its start fails with rule `time_limit`.';

const ChallengeIdParam = z.object({ challenge_id: z.uuid() });

export const propRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/prop/programs',
    operationId: 'createPropProgram',
    summary: 'Create a prop challenge program: its phases and their rules',
    description:
      'A phase target must be above 0 and at most 1000 %, the loss limits 0 to 100 %, at least one phase; a group that ' +
      'does not exist is 422 at `group_id`, a currency without a quoted path to USD 422 at `currency`. Audited. ' +
      RULES,
    tags: ['prop'],
    access: { kind: 'staff', permission: 'manage_prop' },
    body: ProgramInputSchema,
    responses: { 201: { description: 'Created', schema: ProgramSchema } },
    handler: async ({ body, em, services, caller }) => json(201, await createProgram(em, services.quotes, asStaff(caller), body)),
  }),
  defineRoute({
    method: 'get',
    path: '/prop/programs',
    operationId: 'listPropPrograms',
    summary: 'Prop challenge programs, newest first',
    tags: ['prop'],
    access: { kind: 'staff', permission: 'manage_prop' },
    query: z.object({ ...pageQuery() }),
    responses: { 200: { description: 'A page of programs', schema: pageSchema(ProgramSchema) } },
    handler: async ({ query, em }) =>
      json(200, await findPage(em, PropProgram, {}, query, { orderBy: { createdAt: 'desc', id: 'desc' } }, programView)),
  }),
  defineRoute({
    method: 'post',
    path: '/prop/challenges',
    operationId: 'startPropChallenge',
    summary: "Start a customer's challenge: phase 1 on a new funded prop account",
    description:
      "A program or customer that does not exist is 422 at its field. The account opens in the program's group and " +
      'currency and is funded with the initial balance in the same transaction. Audited. ' +
      RULES,
    tags: ['prop'],
    access: { kind: 'staff', permission: 'manage_prop' },
    body: z.object({ program_id: z.uuid(), customer_id: z.uuid() }),
    responses: { 201: { description: 'Phase 1, active', schema: ChallengeSchema, example: { status: 'active' } } },
    handler: async ({ body, em, services, caller }) => {
      // A customer outside the caller's scope is as unknown as one that does not exist.
      if (!(await inScope(em, customerScopeOf(caller), body.customer_id)))
        throw fieldError('body', ['customer_id'], 'No such customer');
      return json(201, await startChallenge(em, services.quotes, asStaff(caller), body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/prop/challenges',
    operationId: 'listPropChallenges',
    summary: 'Challenge stages, newest first',
    description:
      'Every stage of every challenge (each phase and the funded stage is its own record on its own account), filtered ' +
      'by `status`, `program_id`, `customer_id` and the stage account `login`. A filter naming something that does not ' +
      'exist matches nothing.',
    tags: ['prop'],
    access: { kind: 'staff', permission: 'manage_prop' },
    query: z.object({
      status: z.enum(CHALLENGE_STATUSES).optional(),
      program_id: z.uuid().optional(),
      customer_id: z.uuid().optional(),
      login: LoginText.optional(),
      ...pageQuery(),
    }),
    responses: { 200: { description: 'A page of challenge stages', schema: pageSchema(ChallengeSchema) } },
    handler: async ({ query, em, caller }) => json(200, await listChallenges(em, query, query, customerScopeOf(caller))),
  }),
  defineRoute({
    method: 'get',
    path: '/prop/challenges/{challenge_id}',
    operationId: 'getPropChallenge',
    summary: 'One challenge stage, with its rules, the limits it is judged by and the stages of its run',
    tags: ['prop'],
    access: { kind: 'staff', permission: 'manage_prop' },
    params: ChallengeIdParam,
    responses: {
      200: { description: 'The stage', schema: ChallengeDetailSchema },
      404: { description: 'No such challenge' },
    },
    handler: async ({ params, em, caller }) => {
      const challenge = await getChallenge(em, params.challenge_id);
      await inScopeOr404(em, customerScopeOf(caller), challenge, (c) => c.customer_id, 'Challenge');
      return json(200, challenge);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/challenges',
    operationId: 'listMyChallenges',
    summary: "The calling customer's challenge stages, newest first",
    description: 'Every stage of every challenge: each phase and the funded stage is its own record on its own account.',
    tags: ['prop'],
    access: { kind: 'customer' },
    responses: { 200: { description: 'The stages', schema: z.object({ items: z.array(ChallengeSchema) }) } },
    handler: async ({ em, caller }) => json(200, { items: await customerChallenges(em, asCustomer(caller).customerId) }),
  }),
  defineRoute({
    method: 'post',
    path: '/prop/payouts',
    operationId: 'requestPayout',
    summary: "Ask to pay out a prop account's profit to the customer's wallet",
    description:
      "A customer asks for its own prop accounts (another customer's login is 404, as one that does not exist); staff " +
      'with `manage_payouts` for any. What a prop account can pay out is its profit: the smaller of its balance and its ' +
      'equity (a loss still open counts against it, an open gain does not count), less its starting balance (its first ' +
      'deposit), less its pending payouts; more is 422 at `amount`, and a login that is not a prop account is 422 ' +
      "at `login`. The amount (in the prop account's currency) is reserved at once and the payout waits for staff " +
      '(`pending`). ' +
      IDEMPOTENT,
    tags: ['payouts'],
    idempotent: true,
    access: { kind: 'staff_or_customer', permission: 'manage_payouts' },
    body: z.strictObject({
      login: Login,
      amount: MoneyAmount,
      accept_bonus_forfeit: z
        .boolean()
        .optional()
        .describe('Confirms the bonus forfeiture quoted by a 409 BONUS_FORFEIT_UNCONFIRMED'),
    }),
    responses: {
      201: { description: 'Requested, pending', schema: PayoutSchema, example: { status: 'pending' } },
      403: {
        description:
          "VERIFICATION_REQUIRED: the customer's verification level may not withdraw (or FORBIDDEN: a token without the permission)",
      },
      404: { description: 'No such account (or not yours)' },
    },
    handler: async ({ body, em, services, caller }) => {
      if (caller?.kind === 'customer') await assertMayWithdraw(em, caller.customerId);
      return json(201, await requestPayout(em, services.quotes, caller!, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/prop/payouts',
    operationId: 'listPayouts',
    summary: 'Payouts, newest first',
    description:
      'Staff with `manage_payouts` see every payout, filtered by `status`, the prop account `login` and `customer_id`; ' +
      "a customer sees its own (the filters narrow them; another customer's login simply matches nothing).",
    tags: ['payouts'],
    access: { kind: 'staff_or_customer', permission: 'manage_payouts' },
    query: z.object({
      status: z.enum(PAYOUT_STATUSES).optional(),
      login: LoginText.optional(),
      customer_id: z.uuid().optional(),
      ...pageQuery(),
    }),
    responses: { 200: { description: 'A page of payouts', schema: pageSchema(PayoutSchema) } },
    handler: async ({ query, em, caller }) => {
      const where: FilterQuery<Payout> = {};
      if (query.status) where.status = query.status;
      if (query.login !== undefined) where.login = String(query.login);
      if (query.customer_id) where.customer = query.customer_id;
      const scope = customerScopeOf(caller);
      if (scope.customerId !== null) {
        if (!(await inScope(em, scope, query.customer_id ?? scope.customerId)))
          return json(200, { items: [], page: query.page, page_size: query.page_size, total: 0 });
        where.customer = scope.customerId;
      } else if (scope.staff !== null) {
        // Staff limited to their customers see the payouts of customers they manage or their teams manage.
        where.customer = {
          ...(query.customer_id ? { id: query.customer_id } : {}),
          $or: [{ accountManager: scope.staff.userId }, { team: { $in: [...scope.staff.teamIds] } }],
        };
      }
      return json(200, await findPage(em, Payout, where, query, { orderBy: { createdAt: 'desc', id: 'desc' } }, payoutView));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/prop/payouts/{payout_id}',
    operationId: 'getPayout',
    summary: 'One payout',
    tags: ['payouts'],
    access: { kind: 'staff_or_customer', permission: 'manage_payouts' },
    params: PayoutIdParam,
    responses: {
      200: { description: 'The payout', schema: PayoutSchema },
      404: { description: 'No such payout (or not yours)' },
    },
    handler: async ({ params, em, caller }) => {
      const payout = await em.findOne(Payout, params.payout_id);
      return json(200, payoutView(await inScopeOr404(em, customerScopeOf(caller), payout, (p) => p.customer.id, 'Payout')));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/prop/payouts/{payout_id}/approve',
    operationId: 'approvePayout',
    summary: "Approve a pending payout: the prop account pays the customer's wallet",
    description:
      "Debits the prop account and credits the customer's wallet through the ledger (both rows of kind `payout`), " +
      "converting from the prop account's currency at the dealer side of the latest quotes like a transfer, and " +
      'releases the reserve (`approved`), audited. A payout decides once: one that is no longer pending is 409 ' +
      '`PAYOUT_NOT_PENDING`, also when an approve and a reject race. If losses since the request have left less ' +
      'profit than the payout, 409 `PAYOUT_EXCEEDS_PROFIT`; with no quote to convert, 409 `PRICE_UNAVAILABLE`; when ' +
      "the amount converts to less than 0.01 of the wallet's currency, 409 `PAYOUT_TOO_SMALL` (reject it). " +
      IDEMPOTENT,
    tags: ['payouts'],
    idempotent: true,
    access: { kind: 'staff', permission: 'manage_payouts' },
    params: PayoutIdParam,
    body: NoFields,
    responses: {
      200: { description: 'Approved', schema: PayoutSchema },
      404: { description: 'No such payout' },
      409: { description: 'PAYOUT_NOT_PENDING, PAYOUT_EXCEEDS_PROFIT, PRICE_UNAVAILABLE or PAYOUT_TOO_SMALL' },
    },
    handler: async ({ params, em, services, caller }) =>
      json(200, await decidePayout(em, services.quotes, asStaff(caller), params.payout_id, { kind: 'approve' })),
  }),
  defineRoute({
    method: 'post',
    path: '/prop/payouts/{payout_id}/reject',
    operationId: 'rejectPayout',
    summary: 'Reject a pending payout: the reserve is freed (endpoint 10)',
    description:
      'Records the reason (1 to 500 characters) and releases the reserve (`rejected`, final), audited. A payout decides ' +
      'once: one that is no longer pending is 409 `PAYOUT_NOT_PENDING`. ' +
      IDEMPOTENT,
    tags: ['payouts'],
    idempotent: true,
    access: { kind: 'staff', permission: 'manage_payouts' },
    params: PayoutIdParam,
    body: z.strictObject({ reason: z.string().min(1).max(500) }),
    responses: {
      200: { description: 'Rejected', schema: PayoutSchema, example: { status: 'rejected' } },
      404: { description: 'No such payout' },
      409: { description: 'PAYOUT_NOT_PENDING' },
    },
    handler: async ({ params, body, em, services, caller }) =>
      json(
        200,
        await decidePayout(em, services.quotes, asStaff(caller), params.payout_id, { kind: 'reject', reason: body.reason }),
      ),
  }),
];
