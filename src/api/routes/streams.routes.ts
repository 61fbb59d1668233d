import { asCustomer, asSession } from '../http/access';
import { defineRoute, json, type RouteSpec } from '../http/route';
import { EVENT_TYPES } from '../../domain/events/event-types';
import { WebhookEventSchema } from '../../domain/webhooks/webhook-body';
import {
  AccountUpdatedSchema,
  BackofficeStreamQuerySchema,
  QuoteEventSchema,
  StreamNoticeSchema,
  CustomerStreamQuerySchema,
  QuoteStreamQuerySchema,
  StreamTicketSchema,
} from '../../domain/streams/stream-views';
import { openStream } from '../streams/open-stream';

const STREAM_RULES =
  'Answers `text/event-stream`. Each domain event is `id:` (its sequence number), `event:` (its type) and `data:` (the JSON webhooks deliver: `{"id","type","sequence","created_at","data"}`); ' +
  'a comment line every 15 s keeps proxies from closing the stream. Reconnecting with `Last-Event-ID` replays every matching event after that id from the last 24 hours, in order, then goes live; ' +
  'an id older than that gets a first event `reset` (reload your state). A client more than 10,000 events behind gets `overflow` and the stream ends. ' +
  'Authenticate with a Bearer token or `?ticket=` (POST /auth/stream-tickets). More than 5 open streams per session: 429 `RATE_LIMITED`; more than 10 per customer or staff user across all its sessions: 429 `TOO_MANY_STREAMS`. A revoked session ends its streams within a second.';

const OPEN = 'The event stream, open until the client leaves or the server ends it';
const LIMITED = {
  description:
    'RATE_LIMITED: the session already holds 5 open streams; TOO_MANY_STREAMS: the principal holds 10 across its sessions',
};
const UNAVAILABLE = { description: 'STREAMS_UNAVAILABLE: the live feed (Redis) cannot be reached; retry after Retry-After' };
const NOTICES = { reset: StreamNoticeSchema, overflow: StreamNoticeSchema };
/** Every domain event type, each `data:` the webhook event JSON. */
const DOMAIN_EVENTS = Object.fromEntries(EVENT_TYPES.map((t) => [t, WebhookEventSchema]));
const DOMAIN_EXAMPLE =
  'retry: 2000\n\n' +
  'id: 4711\nevent: order.opened\ndata: {"id":"6f1c2a9e-8b3d-4c5e-9f10-2a3b4c5d6e7f","type":"order.opened","sequence":4711,"created_at":"2026-11-26T09:30:00.123Z","data":{"order":100234,"login":5001234,"symbol":"EURUSD","cmd":0,"volume":0.1}}\n\n' +
  ': keep-alive\n\n';

export const streamRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/auth/stream-tickets',
    operationId: 'createStreamTicket',
    summary: 'A single-use ticket to open one event stream',
    description:
      "A browser's EventSource cannot send an Authorization header: this trades the caller's token for a ticket, valid 30 s, " +
      "accepted once as `?ticket=` by any stream route. The stream then runs as the caller's session (revoking it ends the stream).",
    tags: ['auth'],
    access: { kind: 'session' },
    responses: { 201: { description: 'The ticket', schema: StreamTicketSchema } },
    handler: async ({ services, caller }) => {
      const c = asSession(caller);
      const issued = await services.identity.streamTickets.issue({
        type: c.kind,
        sub: c.kind === 'user' ? c.userId : c.customerId,
        sid: c.sessionId,
      });
      return json(201, issued);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/streams/quotes',
    operationId: 'streamQuotes',
    summary: 'Live quotes (server-sent events)',
    description:
      'Events `quote` with `{"symbol","bid","ask","time"}` for the symbols asked for (all when none), the current ones first. ' +
      'Latest value only: a client that reads slowly skips to the newest quote of each symbol. Quote events carry no id. ' +
      'Any logged-in caller. ' +
      STREAM_RULES,
    tags: ['streams'],
    access: { kind: 'authenticated' },
    acceptsTicket: true,
    raw: true,
    query: QuoteStreamQuerySchema,
    responses: {
      200: {
        description: OPEN,
        eventStream: {
          events: { quote: QuoteEventSchema },
          example:
            'retry: 2000\n\nevent: quote\ndata: {"symbol":"EURUSD","bid":1.08412,"ask":1.08425,"time":"2026-11-26T09:30:00.123Z"}\n\n',
        },
      },
      429: LIMITED,
      503: UNAVAILABLE,
    },
    handler: async ({ services, req, res, em, caller, query }) => {
      await openStream({
        kind: 'quotes',
        caller: caller!,
        filter: { symbols: query.symbols ? new Set(query.symbols) : undefined },
        req,
        res,
        em,
        services,
      });
      return undefined;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/stream',
    operationId: 'streamCustomerEvents',
    summary: "The customer's own events (server-sent events)",
    description:
      'Every domain event about the caller’s accounts, orders, transfers, withdrawals, payouts and notifications, ' +
      'plus `account.updated` `{"login","balance","credit","equity","margin","free_margin"}` (no id: it is derived, not stored) when an account’s figures change, ' +
      'at most once per account per 250 ms. ' +
      STREAM_RULES,
    tags: ['streams'],
    access: { kind: 'customer' },
    acceptsTicket: true,
    raw: true,
    query: CustomerStreamQuerySchema,
    responses: {
      200: {
        description: OPEN,
        eventStream: {
          events: { ...DOMAIN_EVENTS, 'account.updated': AccountUpdatedSchema, ...NOTICES },
          example:
            DOMAIN_EXAMPLE +
            'event: account.updated\ndata: {"login":5001234,"balance":"10250.00","credit":"0.00","equity":"10312.40","margin":"216.85","free_margin":"10095.55"}\n\n',
        },
      },
      429: LIMITED,
      503: UNAVAILABLE,
    },
    handler: async ({ services, req, res, em, caller }) => {
      const customer = asCustomer(caller);
      await openStream({
        kind: 'customer',
        caller: customer,
        filter: { customerId: customer.customerId },
        req,
        res,
        em,
        services,
      });
      return undefined;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/backoffice/stream',
    operationId: 'streamBackofficeEvents',
    summary: 'Every domain event (server-sent events)',
    description: 'Every domain event, or those of the types asked for. Needs `view_events`. ' + STREAM_RULES,
    tags: ['streams'],
    access: { kind: 'staff', permission: 'view_events' },
    acceptsTicket: true,
    raw: true,
    query: BackofficeStreamQuerySchema,
    responses: {
      200: { description: OPEN, eventStream: { events: { ...DOMAIN_EVENTS, ...NOTICES }, example: DOMAIN_EXAMPLE } },
      429: LIMITED,
      503: UNAVAILABLE,
    },
    handler: async ({ services, req, res, em, caller, query }) => {
      await openStream({
        kind: 'backoffice',
        caller: caller!,
        filter: { types: query.types ? new Set(query.types) : undefined },
        req,
        res,
        em,
        services,
        lastEventId: query.last_event_id,
      });
      return undefined;
    },
  }),
];
