import { z } from 'zod';
import {
  listNotifications,
  markAllRead,
  markRead,
  NotificationListSchema,
  NotificationSchema,
} from '../../domain/notifications/notifications';
import { asCustomer } from '../http/access';
import { pageQuery } from '../http/paging';
import { defineRoute, json, type RouteSpec } from '../http/route';

export const notificationRoutes: RouteSpec[] = [
  defineRoute({
    method: 'get',
    path: '/customers/me/notifications',
    operationId: 'listMyNotifications',
    summary: 'Your notifications, newest first',
    description:
      'Made by a worker from the events that concern you: withdrawals requested, approved and rejected, payouts ' +
      'approved and rejected, positions closed by the dealing desk (bulk close) or at stop-out, transfers completed, ' +
      'margin calls and stop-outs; each event at most once. `page` (from 1, default 1) and `page_size` (1 to 50, ' +
      'default 20); a value out of range is 422 at that query parameter. `unread_count` counts all your unread ' +
      'notifications, `total` all of them.',
    tags: ['notifications'],
    access: { kind: 'customer' },
    query: z.object(pageQuery(50)),
    responses: { 200: { description: 'A page of notifications', schema: NotificationListSchema } },
    handler: async ({ query, em, caller }) => json(200, await listNotifications(em, asCustomer(caller).customerId, query)),
  }),
  defineRoute({
    method: 'post',
    path: '/customers/me/notifications/read-all',
    operationId: 'markAllMyNotificationsRead',
    summary: 'Mark all your notifications read',
    tags: ['notifications'],
    access: { kind: 'customer' },
    responses: {
      200: {
        description: 'How many were marked',
        schema: z.object({ marked: z.int(), unread_count: z.int() }),
      },
    },
    handler: async ({ em, caller }) => json(200, await markAllRead(em, asCustomer(caller).customerId)),
  }),
  defineRoute({
    method: 'post',
    path: '/customers/me/notifications/{notification_id}/read',
    operationId: 'markMyNotificationRead',
    summary: 'Mark one of your notifications read',
    description: "Marking it again changes nothing. Another customer's notification is 404, as one that does not exist.",
    tags: ['notifications'],
    access: { kind: 'customer' },
    params: z.object({ notification_id: z.uuid() }),
    responses: {
      200: { description: 'The notification, read', schema: NotificationSchema },
      404: { description: 'No such notification of yours' },
    },
    handler: async ({ params, em, caller }) =>
      json(200, await markRead(em, asCustomer(caller).customerId, params.notification_id)),
  }),
];
