import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { accessibleAccount } from '../../domain/accounts/accounts';
import { assertMayTrade } from '../../domain/compliance/limits';
import type { Caller } from '../../platform/caller';
import {
  BulkCloseAcceptedSchema,
  bulkCloseAccepted,
  bulkCloseResult,
  BulkCloseResultSchema,
  startBulkClose,
} from '../../domain/orders/bulk-close';
import { closeMarketOrder } from '../../domain/orders/close-order';
import { openMarketOrder } from '../../domain/orders/open-order';
import { OrderSchema, orderViews } from '../../domain/orders/order-view';
import {
  cancelPendingOrder,
  createPendingOrder,
  listPendingOrders,
  modifyPendingOrder,
  PendingOrderSchema,
  pendingOrderView,
} from '../../domain/orders/pending-orders';
import { findPage } from '../../db/find-page';
import { Order } from '../../entities/order.entity';
import { PENDING_STATUSES } from '../../entities/pending-order.entity';
import { asStaff } from '../http/access';
import { integerText, Login, LoginText, Price, TicketParam, TrailingStop, Volume } from '../http/amounts';
import { pageQuery, pageSchema } from '../http/paging';
import { defineRoute, json, type RouteSpec } from '../http/route';
import { runAndReply } from '../http/run-reply';
import { NoFields } from '../http/strict-body';
import { isoInstant } from '../http/timestamps';
import { customerScopeOf, inScopeOr404 } from '../../platform/customer-scope';

async function orderForCaller(em: EntityManager, caller: Caller | undefined, ticket: number): Promise<Order> {
  const order = await em.findOne(Order, { ticket: String(ticket) }, { populate: ['account'] });
  return inScopeOr404(em, customerScopeOf(caller), order, (o) => o.account.getEntity().customer.id, 'Order');
}

const LoginOnly = z.object({ login: LoginText });

/** A retried order request must not open, place or close twice. */
const IDEMPOTENT =
  'Accepts an Idempotency-Key header: the same key and body within 24 hours replays the first answer ' +
  '(`Idempotent-Replayed: true`) and trades nothing; another body is 422; while the first is in flight, 409. ' +
  'Unknown body fields are refused (422 `extra_forbidden` at the field).';

const OrderIdParam = z.object({ order_id: integerText('A pending order id') });

export const orderRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/orders',
    operationId: 'openOrder',
    summary: 'Open a market order at the current quote',
    description:
      'Buys at ask, sells at bid (plus the group spread), and books the opening commission of the group. ' +
      "422 on volume when free margin does not cover the margin and the commission, or when the open would take the group's " +
      'exposure past its max_exposure. ' +
      IDEMPOTENT,
    tags: ['orders'],
    idempotent: true,
    access: { kind: 'staff_or_customer', permission: 'open_position' },
    body: z.strictObject({
      login: Login,
      symbol: z.string().min(1).max(32),
      cmd: z.literal([0, 1]).meta({ type: 'integer' }).describe('0 buy, 1 sell'),
      volume: Volume,
      sl: Price.nullable().optional(),
      tp: Price.nullable().optional(),
      comment: z.string().max(255).optional(),
    }),
    responses: {
      201: {
        description: 'Opened',
        schema: OrderSchema,
        example: { status: 'open', closed_at: null, close_price: null, profit: null, close_reason: null, swap: '0.00' },
      },
      403: {
        description:
          "VERIFICATION_REQUIRED: the customer's verification level may not trade (or FORBIDDEN: a token without the permission)",
      },
      409: { description: "TOO_MANY_POSITIONS: the account holds its group's max_open_positions open orders" },
    },
    handler: async ({ body, em, services, caller }) => {
      if (caller?.kind === 'customer') await assertMayTrade(em, services.verificationLevels, caller.customerId);
      const on = { login: body.login, scope: customerScopeOf(caller) };
      return json(201, await openMarketOrder(em, services.quotes, on, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/orders',
    operationId: 'listOrders',
    summary: "An account's market orders, newest first",
    tags: ['orders'],
    access: { kind: 'staff_or_customer', permission: 'view_orders' },
    query: z.object({ login: LoginText, status: z.enum(['open', 'closed']).optional(), ...pageQuery() }),
    responses: { 200: { description: 'A page of orders', schema: pageSchema(OrderSchema) } },
    handler: async ({ query, em, caller }) => {
      const account = await accessibleAccount(em, query.login, customerScopeOf(caller));
      const where = { account: account.id, ...(query.status ? { status: query.status } : {}) };
      return json(200, await orderViews(await findPage(em, Order, where, query, { orderBy: { ticket: 'desc' } }, (o) => o), em));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/orders/{ticket}/close',
    operationId: 'closeOrder',
    summary: 'Close one market order at the current quote and book its profit',
    description: 'Closes the whole order: the body, if any, has no fields. ' + IDEMPOTENT,
    tags: ['orders'],
    idempotent: true,
    access: { kind: 'staff_or_customer', permission: 'close_position' },
    params: z.object({ ticket: TicketParam }),
    body: NoFields,
    responses: {
      200: { description: 'Closed', schema: OrderSchema },
      409: { description: 'ORDER_NOT_OPEN, or PRICE_UNAVAILABLE when the symbol has no quote' },
    },
    handler: async ({ params, em, services, caller }) => {
      const order = await orderForCaller(em, caller, params.ticket);
      return json(200, await closeMarketOrder(em, services.quotes, order.ticket));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/orders/pending',
    operationId: 'createPendingOrder',
    summary: 'Place a pending order',
    description: IDEMPOTENT,
    tags: ['pending orders'],
    idempotent: true,
    access: { kind: 'staff_or_customer', permission: 'open_position' },
    body: z.strictObject({
      login: Login,
      symbol: z.string().min(1).max(32),
      cmd: z
        .literal([2, 3, 4, 5, 6, 7])
        .meta({ type: 'integer' })
        .describe('2 buy limit, 3 sell limit, 4 buy stop, 5 sell stop, 6 buy stop limit, 7 sell stop limit'),
      volume: Volume,
      trigger_price: Price,
      limit_price: Price.nullable().optional().describe('Stop-limit orders only (cmd 6 and 7), where it is required'),
      sl: Price.nullable().optional(),
      tp: Price.nullable().optional(),
      trailing_stop: TrailingStop.nullable().optional(),
      expiry_at: isoInstant().nullable().optional(),
      comment: z.string().max(255).optional(),
    }),
    responses: {
      201: { description: 'Placed', schema: PendingOrderSchema },
      403: {
        description:
          "VERIFICATION_REQUIRED: the customer's verification level may not trade (or FORBIDDEN: a token without the permission)",
      },
    },
    handler: async ({ body, em, services, caller }) => {
      if (caller?.kind === 'customer') await assertMayTrade(em, services.verificationLevels, caller.customerId);
      const account = await accessibleAccount(em, body.login, customerScopeOf(caller));
      return json(201, pendingOrderView(await createPendingOrder(em, services.quotes, account, body)));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/orders/pending',
    operationId: 'listPendingOrders',
    summary: "An account's pending orders, newest first",
    tags: ['pending orders'],
    access: { kind: 'staff_or_customer', permission: 'view_orders' },
    query: z.object({ login: LoginText, status: z.enum(PENDING_STATUSES).optional(), ...pageQuery() }),
    responses: { 200: { description: 'A page of pending orders', schema: pageSchema(PendingOrderSchema) } },
    handler: async ({ query, em, caller }) => {
      const account = await accessibleAccount(em, query.login, customerScopeOf(caller));
      return json(200, await listPendingOrders(em, account, query.status, query));
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/orders/pending/{order_id}',
    operationId: 'modifyPendingOrder',
    summary: 'Change stop-loss, take-profit, trailing stop, trigger or limit price of a pending order',
    description:
      'Only the fields sent change; null clears sl, tp and trailing_stop. Works only while the order is pending, not once a stop-limit order has triggered (409 ORDER_NOT_PENDING). The login query parameter must be the order’s account (404 otherwise). Unknown body fields are refused (422 `extra_forbidden` at the field).',
    tags: ['pending orders'],
    access: { kind: 'staff_or_customer', permission: 'modify_orders' },
    params: OrderIdParam,
    query: LoginOnly,
    body: z.strictObject({
      sl: Price.nullable().optional(),
      tp: Price.nullable().optional(),
      trailing_stop: TrailingStop.nullable().optional(),
      trigger_price: Price.optional(),
      limit_price: Price.optional(),
    }),
    responses: {
      200: { description: 'The order after the change', schema: PendingOrderSchema },
      409: { description: 'ORDER_NOT_PENDING' },
    },
    handler: async ({ params, query, body, em, services, caller }) => {
      const account = await accessibleAccount(em, query.login, customerScopeOf(caller));
      return json(200, pendingOrderView(await modifyPendingOrder(em, services.quotes, account, params.order_id, body)));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/orders/pending/{order_id}',
    operationId: 'cancelPendingOrder',
    summary: 'Cancel a pending order',
    description:
      'Cancels an order that is still waiting: pending, or a stop-limit order that has triggered and rests as a limit order at its limit_price. A filled, cancelled or expired order is 409 ORDER_NOT_PENDING. The login query parameter must be the order’s account (404 otherwise).',
    tags: ['pending orders'],
    access: { kind: 'staff_or_customer', permission: 'modify_orders' },
    params: OrderIdParam,
    query: LoginOnly,
    responses: {
      200: { description: 'Cancelled', schema: PendingOrderSchema, example: { status: 'cancelled' } },
      409: { description: 'ORDER_NOT_PENDING' },
    },
    handler: async ({ params, query, em, caller }) => {
      const account = await accessibleAccount(em, query.login, customerScopeOf(caller));
      return json(200, pendingOrderView(await cancelPendingOrder(em, account, params.order_id)));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/orders/bulk-close',
    operationId: 'bulkCloseOrders',
    summary: 'Close every open order of an account',
    description:
      'Each ticket closes in its own transaction (one queued job per ticket); a ticket that cannot close is listed in failed with a reason, an already closed one counts as closed. Answers when all are done; after BULK_CLOSE_WAIT_MS (30 s) it answers 202 with the run id and GET /orders/bulk-close/{id} gives the result. ' +
      IDEMPOTENT,
    tags: ['orders'],
    idempotent: true,
    access: { kind: 'staff', permission: 'close_position' },
    body: z.strictObject({ login: Login, comment: z.string().max(255).optional() }),
    responses: {
      200: { description: 'Every ticket decided', schema: BulkCloseResultSchema },
      202: { description: 'Still running', schema: BulkCloseAcceptedSchema },
      404: { description: 'No such account' },
    },
    handler: ({ body, em, services, caller }) =>
      runAndReply(
        startBulkClose(em, services.jobs, { login: body.login, comment: body.comment, requestedBy: asStaff(caller).userId }),
        {
          queueEvents: services.queueEvents,
          waitMs: services.config.bulkCloseWaitMs,
          read: (runId) => bulkCloseResult(em, runId),
          isDone: (run) => run.status === 'completed',
          accepted: bulkCloseAccepted,
        },
      ),
  }),
  defineRoute({
    method: 'get',
    path: '/orders/bulk-close/{run_id}',
    operationId: 'getBulkCloseRun',
    summary: 'The result of a bulk close, as far as it has got',
    tags: ['orders'],
    access: { kind: 'staff', permission: 'close_position' },
    params: z.object({ run_id: z.uuid() }),
    responses: { 200: { description: 'The run', schema: BulkCloseResultSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, em }) => json(200, await bulkCloseResult(em, params.run_id)),
  }),
];
