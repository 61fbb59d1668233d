import { z } from 'zod';
import { accessibleAccount } from '../../domain/accounts/accounts';
import { changeCreditByHand, CreditChangeSchema } from '../../domain/credit/credit';
import { customerScopeOf } from '../../platform/customer-scope';
import { asStaff } from '../http/access';
import { LoginText, MoneyAmount } from '../http/amounts';
import { defineRoute, json, type RouteSpec } from '../http/route';

const LoginParam = z.object({ login: LoginText });

export const bonusRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/api/backoffice/accounts/{login}/credit',
    operationId: 'changeCredit',
    summary: "Credit in or out: the account's non-withdrawable bucket",
    description:
      'Books `amount` into (`in`) or out of (`out`) the credit of the account, a ledger row of bucket `credit` ' +
      '(kind `credit_in` or `credit_out`), and emits `account.credit_changed`. Credit counts in equity and margin but ' +
      'never leaves the account: withdrawals, transfers and payouts draw on the balance only. Taking out more than the ' +
      'credit is 422 at `amount`. Accepts an Idempotency-Key header: the same key and body within 24 hours replays the ' +
      'first answer; another body is 422; while the first is in flight, 409.',
    tags: ['bonuses'],
    idempotent: true,
    access: { kind: 'staff', permission: 'manage_bonuses' },
    params: LoginParam,
    body: z.strictObject({
      direction: z.enum(['in', 'out']),
      amount: MoneyAmount,
      comment: z.string().min(1).max(500),
    }),
    responses: {
      201: { description: 'Booked', schema: CreditChangeSchema },
      404: { description: 'No such account' },
    },
    handler: async ({ params, body, em, caller }) => {
      const account = await accessibleAccount(em, params.login, customerScopeOf(caller));
      return json(201, await changeCreditByHand(em, asStaff(caller), account, body));
    },
  }),
];
