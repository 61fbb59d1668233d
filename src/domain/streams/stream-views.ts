import { z } from 'zod';
import { EVENT_TYPES } from '../events/event-types';
import { MoneyText } from '../../platform/money-text';

export const StreamTicketSchema = z
  .object({
    ticket: z
      .string()
      .describe('Opens one stream as `?ticket=`, once')
      .meta({ examples: ['st_Qm9vdGgtc3RyZWFtLXRpY2tldC1leGFtcGxl'] }),
    expires_in: z
      .number()
      .int()
      .describe('Seconds the ticket stays valid (30)')
      .meta({ examples: [30] }),
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
export const AccountUpdatedSchema = z
  .object({
    login: z.number().int(),
    balance: MoneyText,
    credit: MoneyText,
    equity: MoneyText,
    margin: MoneyText,
    free_margin: MoneyText,
  })
  .describe(
    '`account.updated` (no id): the account figures after a change, in the account currency, typed as in the account view (money as decimal text)',
  )
  .meta({
    examples: [{ login: 5001234, balance: '10250.00', equity: '10312.40', margin: '216.85', free_margin: '10095.55' }],
  });

/** `quote`: the newest bid and ask of a symbol. */
export const QuoteEventSchema = z
  .object({ symbol: z.string(), bid: z.number(), ask: z.number(), time: z.iso.datetime() })
  .describe('`quote` (no id): the newest bid and ask of a symbol')
  .meta({ examples: [{ symbol: 'EURUSD', bid: 1.08412, ask: 1.08425, time: '2026-11-26T09:30:00.123Z' }] });

/** `reset` and `overflow`: the stream's own notices (no id). */
export const StreamNoticeSchema = z
  .object({ detail: z.string() })
  .describe(
    '`reset` (the first event when Last-Event-ID is older than 24 hours: reload your state) or `overflow` (the last event: the client fell more than 10,000 events behind)',
  )
  .meta({ examples: [{ detail: 'Events after this id are no longer kept: reload your state' }] });
