import { z } from 'zod';
import type { EntityManager } from '@mikro-orm/postgresql';
import { accessibleAccount } from '../../domain/accounts/accounts';
import { changeCreditByHand, CreditChangeSchema } from '../../domain/bonuses/credit';
import { BonusSchema, bonusesOfCustomer, cancelBonus, grantByHand } from '../../domain/bonuses/bonuses';
import { BonusProgramInputSchema, BonusProgramSchema, createProgram, programView } from '../../domain/bonuses/bonus-programs';
import {
  CampaignInputSchema,
  CampaignSchema,
  createCampaign,
  createPromoCode,
  PromoCodeInputSchema,
  PromoCodeSchema,
  PromoPreviewSchema,
  RedemptionSchema,
  setPromoCodeActive,
  validatePromoCode,
} from '../../domain/bonuses/promo-codes';
import { redeemPromoCode } from '../../domain/bonuses/promo-redeem';
import { PROMO_ATTEMPTS } from '../../domain/identity/identity';
import { BonusProgram } from '../../entities/bonus-program.entity';
import { Customer } from '../../entities/customer.entity';
import { executeBound } from '../../db/bound-statement';
import type { Caller } from '../../platform/caller';
import { customerScopeOf, inScopeOr404 } from '../../platform/customer-scope';
import { asCustomer, asStaff } from '../http/access';
import { LoginText, MoneyAmount } from '../http/amounts';
import { defineRoute, json, type RouteSpec } from '../http/route';

const LoginParam = z.object({ login: LoginText });
const CustomerParam = z.object({ customer_id: z.uuid() });

/** The customer, when the caller may see it (else 404). */
async function visibleCustomer(em: EntityManager, caller: Caller | undefined, id: string): Promise<Customer> {
  return inScopeOr404(em, customerScopeOf(caller), await em.findOne(Customer, id), (c) => c.id, 'Customer');
}

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
  defineRoute({
    method: 'post',
    path: '/api/crm/bonus-programs',
    operationId: 'createBonusProgram',
    summary: 'Create a bonus programme',
    description:
      'A programme grants a `fixed` amount or a `deposit_percent` of the qualifying deposit (capped at `max_amount`), on ' +
      'accounts of `group_ids` (all trading accounts when empty), by `trigger` (`manual`, `deposit`, `promo_code`). ' +
      'Lots required = amount x `release.lots_per_unit`; `on_target` releases the whole bonus when they are traded, ' +
      '`per_lot` releases amount / lots required per counted lot. Closes held less than `min_hold_seconds` (default 60) ' +
      'count 0, hedged volume counts net, each order once. `lifetime_days` sets the expiry; `on_transfer_out` decides ' +
      'what money leaving the account costs (`forfeit`: the whole unreleased credit; `proportional`: the same fraction ' +
      'of it as the amount is of the balance).',
    tags: ['bonuses'],
    access: { kind: 'staff', permission: 'manage_bonuses' },
    body: BonusProgramInputSchema,
    responses: { 201: { description: 'Created', schema: BonusProgramSchema } },
    handler: async ({ body, em, caller }) => json(201, await createProgram(em, asStaff(caller), body)),
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/bonus-programs',
    operationId: 'listBonusPrograms',
    summary: 'Bonus programmes, newest first',
    tags: ['bonuses'],
    access: { kind: 'staff', permission: 'manage_bonuses' },
    responses: { 200: { description: 'The programmes', schema: z.object({ items: z.array(BonusProgramSchema) }) } },
    handler: async ({ em }) =>
      json(200, { items: (await em.find(BonusProgram, {}, { orderBy: { createdAt: 'desc' }, limit: 500 })).map(programView) }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/crm/customers/{customer_id}/bonuses',
    operationId: 'grantBonus',
    summary: 'Grant a bonus by hand',
    description:
      "Grants a bonus of the programme on one of the customer's trading accounts (`login`): `amount` or the programme's " +
      'fixed amount, booked as credit (`credit_in`) at once, status `active`. The `bonus_grant` fraud rules run first: ' +
      'a review records it `on_hold` with no credit until its case releases it; a block is 403 `FRAUD_BLOCKED`. An ' +
      'account outside the programme (group, currency, kind) or a disabled or finished programme is 422 at `login`. ' +
      'Accepts an Idempotency-Key header.',
    tags: ['bonuses'],
    idempotent: true,
    access: { kind: 'staff', permission: 'manage_bonuses' },
    params: CustomerParam,
    body: z.strictObject({ program_id: z.uuid(), login: z.int().positive(), amount: MoneyAmount.optional() }),
    responses: {
      201: { description: 'Granted', schema: BonusSchema, example: { status: 'active' } },
      404: { description: 'No such customer, or the login is not theirs' },
    },
    handler: async ({ params, body, em, caller }) => {
      const customer = await visibleCustomer(em, caller, params.customer_id);
      return json(201, await grantByHand(em, asStaff(caller), customer.id, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/customers/{customer_id}/bonuses',
    operationId: 'listCustomerBonuses',
    summary: "A customer's bonuses, newest first",
    tags: ['bonuses'],
    access: { kind: 'staff', permission: 'view_customers' },
    params: CustomerParam,
    responses: { 200: { description: 'The bonuses', schema: z.object({ items: z.array(BonusSchema) }) } },
    handler: async ({ params, em, caller }) => {
      const customer = await visibleCustomer(em, caller, params.customer_id);
      return json(200, { items: await bonusesOfCustomer((s) => executeBound(em, s), customer.id) });
    },
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/bonuses',
    operationId: 'listMyBonuses',
    summary: 'Your bonuses and their progress',
    description:
      '`lots_done` of `lots_required` is the progress; `released` what has become balance. Progress also arrives on the ' +
      'customer stream as `bonus.progress` events.',
    tags: ['bonuses'],
    access: { kind: 'customer' },
    responses: { 200: { description: 'The bonuses', schema: z.object({ items: z.array(BonusSchema) }) } },
    handler: async ({ em, caller }) =>
      json(200, { items: await bonusesOfCustomer((s) => executeBound(em, s), asCustomer(caller).customerId) }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/crm/bonuses/{bonus_id}/cancel',
    operationId: 'cancelBonus',
    summary: 'Cancel a bonus',
    description:
      "An active bonus's unreleased credit leaves the account (`credit_out`); a pending or held one booked none (its " +
      'promo redemption becomes `void`). One not active, pending or on hold is 409 BONUS_NOT_ACTIVE.',
    tags: ['bonuses'],
    access: { kind: 'staff', permission: 'manage_bonuses' },
    params: z.object({ bonus_id: z.uuid() }),
    body: z.strictObject({ reason: z.string().min(1).max(500) }),
    responses: {
      200: { description: 'Cancelled', schema: BonusSchema, example: { status: 'cancelled' } },
      404: { description: 'No such bonus' },
      409: { description: 'BONUS_NOT_ACTIVE' },
    },
    handler: async ({ params, body, em, caller }) =>
      json(200, await cancelBonus(em, asStaff(caller), params.bonus_id, body.reason)),
  }),
  defineRoute({
    method: 'post',
    path: '/api/crm/campaigns',
    operationId: 'createCampaign',
    summary: 'Create a promotion campaign',
    description:
      'A period and an optional budget: `usage` counts redemptions, `spend` the bonus money granted. Redeems consume it ' +
      'under a row lock in the transaction of the grant, so it is never overspent.',
    tags: ['bonuses'],
    access: { kind: 'staff', permission: 'manage_promotions' },
    body: CampaignInputSchema,
    responses: { 201: { description: 'Created', schema: CampaignSchema } },
    handler: async ({ body, em, caller }) => json(201, await createCampaign(em, asStaff(caller), body)),
  }),
  defineRoute({
    method: 'post',
    path: '/api/crm/promo-codes',
    operationId: 'createPromoCode',
    summary: 'Create a promo code',
    description:
      '`code` (letters, digits and hyphens, 4 to 32, compared case-insensitively; generated when absent) is unique among ' +
      'active codes (409 PROMO_CODE_TAKEN). Its reward is a bonus of `reward.bonus_program_id`. A code with ' +
      '`first_deposit_only` or `min_deposit` (or a percentage programme) is `armed` at redeem and granted on the first ' +
      'qualifying deposit. `partner_id` attributes redeeming customers without one to that partner.',
    tags: ['bonuses'],
    access: { kind: 'staff', permission: 'manage_promotions' },
    body: PromoCodeInputSchema,
    responses: { 201: { description: 'Created', schema: PromoCodeSchema }, 409: { description: 'PROMO_CODE_TAKEN' } },
    handler: async ({ body, em, caller }) => json(201, await createPromoCode(em, asStaff(caller), body)),
  }),
  defineRoute({
    method: 'patch',
    path: '/api/crm/promo-codes/{promo_code_id}',
    operationId: 'updatePromoCode',
    summary: 'Deactivate or reactivate a promo code',
    description: 'Used codes are never deleted; a deactivated code answers redeems as an unknown one (404).',
    tags: ['bonuses'],
    access: { kind: 'staff', permission: 'manage_promotions' },
    params: z.object({ promo_code_id: z.uuid() }),
    body: z.object({ active: z.boolean() }),
    responses: { 200: { description: 'Updated', schema: PromoCodeSchema }, 404: { description: 'No such code' } },
    handler: async ({ params, body, em, caller }) =>
      json(200, await setPromoCodeActive(em, asStaff(caller), params.promo_code_id, body.active)),
  }),
  defineRoute({
    method: 'post',
    path: '/customers/me/promo-codes/validate',
    operationId: 'validatePromoCode',
    summary: 'Check a promo code without using it',
    description:
      'Answers the reward preview, or exactly the error a redeem would give now; reserves nothing. Validate and redeem ' +
      'attempts together are limited to 10 an hour per customer (429 RATE_LIMITED).',
    tags: ['bonuses'],
    access: { kind: 'customer' },
    body: z.object({ code: z.string().min(1).max(64) }),
    responses: {
      200: { description: 'The reward', schema: PromoPreviewSchema },
      403: { description: 'PROMO_NOT_ELIGIBLE (country, first deposit already made, group)' },
      404: { description: 'PROMO_CODE_NOT_FOUND: unknown or inactive (not distinguished)' },
      409: { description: 'PROMO_CODE_EXPIRED, PROMO_CODE_EXHAUSTED or PROMO_CODE_ALREADY_USED' },
    },
    handler: async ({ body, em, services, caller }) => {
      const customerId = asCustomer(caller).customerId;
      await services.identity.promoThrottle.take([{ key: customerId, limit: PROMO_ATTEMPTS.limit }]);
      return json(200, await validatePromoCode(em, customerId, body));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/customers/me/promo-codes/redeem',
    operationId: 'redeemPromoCode',
    summary: 'Use a promo code',
    description:
      'Grants the bonus at once (`applied`) on `login` or your first eligible trading account, or arms the code until ' +
      'your first qualifying deposit (`armed`: its bonus is `pending`, without credit, until that deposit makes it ' +
      '`active`; arming expires with the code). `bonus_id` names the bonus in every case. The redeem runs the ' +
      '`promo_redeem` fraud rules: a hold answers `on_hold` (the bonus `on_hold`, no credit) until a review decides; a ' +
      'block is 403 `FRAUD_BLOCKED`. An `X-Device-Id` header is recorded. Errors as for validate. Accepts an ' +
      'Idempotency-Key header.',
    tags: ['bonuses'],
    idempotent: true,
    access: { kind: 'customer' },
    body: z.object({ code: z.string().min(1).max(64), login: z.int().positive().optional() }),
    responses: {
      201: { description: 'Redeemed', schema: RedemptionSchema },
      403: { description: 'PROMO_NOT_ELIGIBLE, or FRAUD_BLOCKED' },
      404: { description: 'PROMO_CODE_NOT_FOUND' },
      409: { description: 'PROMO_CODE_EXPIRED, PROMO_CODE_EXHAUSTED or PROMO_CODE_ALREADY_USED' },
    },
    handler: async ({ body, em, services, caller }) => {
      const customerId = asCustomer(caller).customerId;
      await services.identity.promoThrottle.take([{ key: customerId, limit: PROMO_ATTEMPTS.limit }]);
      return json(201, await redeemPromoCode(em, customerId, body));
    },
  }),
];
