import { z } from 'zod';
import { EVENT_TYPES } from '../events/event-types';

export const StreamTicketSchema = z
  .object({
    ticket: z.string().describe('Opens one stream as `?ticket=`, once'),
    expires_in: z.number().int().describe('Seconds the ticket stays valid (30)'),
  })
  .describe('A single-use stream ticket, for EventSource (which cannot send an Authorization header)');

/** A comma-separated list in a query string, each item checked by `item`. */
function commaList<T extends z.ZodType<unknown, string>>(item: T, max: number) {
  return z
    .string()
    .max(4000)
    .transform((text) =>
      text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .pipe(z.array(item).min(1).max(max));
}

export const QuoteStreamQuerySchema = z.object({
  symbols: commaList(z.string().regex(/^[A-Za-z0-9._-]{1,32}$/), 200)
    .optional()
    .describe('Comma-separated symbols (EURUSD,USDJPY); every symbol when absent'),
  ticket: z.string().max(200).optional().describe('A stream ticket (POST /auth/stream-tickets), instead of a Bearer header'),
});

const LastEventIdQuery = z
  .string()
  .max(40)
  .optional()
  .describe('Where to resume, for a client that cannot send the Last-Event-ID header (the header wins when both are sent)');

export const CustomerStreamQuerySchema = z.object({
  last_event_id: LastEventIdQuery,
  ticket: z.string().max(200).optional().describe('A stream ticket (POST /auth/stream-tickets), instead of a Bearer header'),
});

export const BackofficeStreamQuerySchema = z.object({
  types: commaList(z.enum(EVENT_TYPES), EVENT_TYPES.length)
    .optional()
    .describe('Comma-separated event types (order.opened,order.closed); every type when absent'),
  last_event_id: LastEventIdQuery,
  ticket: z.string().max(200).optional().describe('A stream ticket (POST /auth/stream-tickets), instead of a Bearer header'),
});

/** `account.updated`: an account's figures after a change of balance, equity or margin. */
export const AccountUpdatedSchema = z.object({
  login: z.number().int(),
  balance: z.number(),
  equity: z.number(),
  margin: z.number(),
  free_margin: z.number(),
});

/** `quote`: the newest bid and ask of a symbol. */
export const QuoteEventSchema = z.object({ symbol: z.string(), bid: z.number(), ask: z.number(), time: z.iso.datetime() });
