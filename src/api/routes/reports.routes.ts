import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { REPORT_PARAMS, MAX_STATEMENT_DAYS, StatementParamsSchema } from '../../domain/reports/report-params';
import {
  findReport,
  openDownload,
  ReportAcceptedSchema,
  ReportSchema,
  reportView,
  requestReport,
  type ReportAudience,
} from '../../domain/reports/reports';
import { REPORT_FORMATS, REPORT_TYPES, type ReportType } from '../../entities/report.entity';
import { ValidationFailure } from '../../platform/errors';
import { zodIssuesToItems } from '../validation/zod-issues';
import { asCustomer, asStaff } from '../http/access';
import { defineRoute, json, type HandlerContext, type RouteSpec } from '../http/route';
import { CalendarDate } from '../../platform/calendar-date';

const TYPES_DESCRIPTION =
  'Types and their `params` (dates `YYYY-MM-DD`, UTC days, inclusive):\n' +
  '- `account_statement` `{"login", "from", "to"}` (at most ' +
  `${MAX_STATEMENT_DAYS} days): opening balance, every ledger row of the period, the orders closed in it, the orders open at ` +
  'its end with floating profit (at the quotes when built), closing balance and equity. Opening balance plus the rows is the closing balance.\n' +
  '- `trades` `{"from", "to", "login"?, "symbol"?}`: every order closed in the period, with login and comment.\n' +
  '- `exposure` `{"group_id"?, "currency"? (default USD)}`: per symbol, long, short and net volume, net notional, open orders and ' +
  "clients' floating profit, in `currency` at the latest quotes.\n" +
  '- `deposits_withdrawals` `{"from", "to", "group_id"?}`: per currency and day, completed deposits and withdrawals, their counts and net.\n' +
  '- `daily` `{"trading_date"}`: every account\'s end-of-day snapshot of that date.\n' +
  '- `promotions` `{"from", "to", "campaign_id"?}`: per promo code, redemptions, bonus granted, released, forfeited and net cost.\n' +
  '- `ib_rewards` `{"from", "to", "partner_id"?}`: per partner, level and currency, the orders closed in the period, their lots, ' +
  'and the rewards paid, pending, on hold and reversed, with the count excluded.\n' +
  '- `ib_acquisition` `{"from", "to", "partner_id"?}`: per partner and level (1: its own clients), registrations, first deposits ' +
  'and lots closed in the period. Both keep the rows of the clients in your data scope.\n\n' +
  'Formats: `csv` (RFC 4180, header row of column keys, plain decimals, ISO 8601 UTC times; a field holding a comma, a quote, ' +
  'CR or LF is quoted; text cells beginning, after any leading spaces, with `=`, `+`, `-`, `@`, TAB or CR ' +
  "are prefixed with `'`; a statement is one table whose first column `section` says what each row is), `pdf` (A4, the " +
  "broker's name in the title, page numbers) and `json` (one object, each section an array).";

const ReportRequestSchema = z
  .object({
    type: z.enum(REPORT_TYPES),
    format: z.enum(REPORT_FORMATS),
    params: z
      .record(z.string(), z.unknown())
      .default({})
      .describe('The type\'s parameters; a wrong one is 422 at its path, e.g. `["body", "params", "from"]`'),
  })
  .meta({
    examples: [{ type: 'account_statement', format: 'pdf', params: { login: 5001234, from: '2026-03-01', to: '2026-03-31' } }],
  });

const StatementRequestSchema = z.object({
  login: z.int().min(1),
  from: CalendarDate,
  to: CalendarDate,
  format: z.enum(REPORT_FORMATS),
});

const ReportIdParam = z.object({ report_id: z.uuid() });
const StatementIdParam = z.object({ statement_id: z.uuid() });

/** The type's params, checked by its own schema; problems point into the body at `params`. */
function parseParams(type: ReportType, params: Record<string, unknown>): Record<string, unknown> {
  const schema = REPORT_PARAMS[type];
  const parsed = schema.safeParse(params);
  if (parsed.success) return parsed.data as Record<string, unknown>;
  const issues = parsed.error.issues.map((i) => ({ ...i, path: ['params', ...i.path] }));
  throw new ValidationFailure(zodIssuesToItems('body', issues, z.object({ params: schema }), { params }));
}

/** The checks of the statement's period and dates, pointing at the customer's body fields. */
function parseStatement(body: z.output<typeof StatementRequestSchema>): Record<string, unknown> {
  const params = { login: body.login, from: body.from, to: body.to };
  const parsed = StatementParamsSchema.safeParse(params);
  if (parsed.success) return parsed.data;
  throw new ValidationFailure(zodIssuesToItems('body', parsed.error.issues, StatementParamsSchema, params));
}

/** Streams the file; a client that goes away mid-file ends the stream, which is not an error of ours. */
async function sendFile(
  ctx: HandlerContext<unknown, unknown, unknown>,
  id: string,
  audience: ReportAudience,
): Promise<undefined> {
  const { em, res } = ctx;
  const download = await openDownload(em, await findReport(em, id, audience), audience);
  res.status(200);
  res.setHeader('Content-Type', download.contentType);
  res.setHeader('Content-Length', String(download.bytes));
  res.setHeader('Content-Disposition', `attachment; filename="${download.fileName}"`);
  res.setHeader('Cache-Control', 'private, no-store');
  try {
    await pipeline(Readable.from(download.chunks), res);
  } catch {
    if (!res.destroyed) res.destroy();
  }
  return undefined;
}

const DOWNLOAD_RESPONSES = {
  200: { description: 'The file: `text/csv; charset=utf-8`, `application/pdf` or `application/json`, as an attachment' },
  404: { description: 'Not found' },
  409: { description: 'REPORT_NOT_READY: the report is still queued or running, or it failed' },
};

export const reportRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/api/backoffice/reports',
    operationId: 'requestReport',
    summary: 'Ask for a report: a worker builds the file',
    description:
      'Answers 202 at once with the report id and where to read its status; a worker (queue `reports`) builds the file. ' +
      'Files are kept REPORT_RETENTION_DAYS (at least 7) after they are finished.\n\n' +
      `${TYPES_DESCRIPTION}\n\nAn unknown type is 422 at \`["body", "type"]\`; \`from\` after \`to\` 422 at \`["body", "params", "from"]\`; ` +
      'an unknown login or group 404.',
    tags: ['reports'],
    access: { kind: 'staff', permission: 'view_reports' },
    body: ReportRequestSchema,
    responses: {
      202: { description: 'Queued', schema: ReportAcceptedSchema },
      404: { description: 'The login or group in params does not exist' },
    },
    handler: async ({ body, em, services, caller }) =>
      json(
        202,
        await requestReport(
          em,
          services.jobs,
          { kind: 'staff', actor: asStaff(caller) },
          { type: body.type, format: body.format, params: parseParams(body.type, body.params) },
        ),
      ),
  }),
  defineRoute({
    method: 'get',
    path: '/api/backoffice/reports/{report_id}',
    operationId: 'getReport',
    summary: "A report's status, and where to download it once completed",
    tags: ['reports'],
    access: { kind: 'staff', permission: 'view_reports' },
    params: ReportIdParam,
    responses: { 200: { description: 'The report', schema: ReportSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, em, caller }) =>
      json(200, reportView(await findReport(em, params.report_id, { kind: 'staff', actor: asStaff(caller) }), 'staff')),
  }),
  defineRoute({
    method: 'get',
    path: '/api/backoffice/reports/{report_id}/download',
    operationId: 'downloadReport',
    summary: "A completed report's file (audited)",
    tags: ['reports'],
    access: { kind: 'staff', permission: 'view_reports' },
    params: ReportIdParam,
    raw: true,
    responses: DOWNLOAD_RESPONSES,
    handler: (ctx) => sendFile(ctx, ctx.params.report_id, { kind: 'staff', actor: asStaff(ctx.caller) }),
  }),
  defineRoute({
    method: 'post',
    path: '/customers/me/statements',
    operationId: 'requestMyStatement',
    summary: 'Ask for a statement of one of your accounts: a worker builds the file',
    description:
      'The statement of `login` (your own accounts only; another login is 404) from `from` to `to` (inclusive, at most ' +
      `${MAX_STATEMENT_DAYS} days; \`from\` after \`to\` is 422 at \`["body", "from"]\`), as \`csv\`, \`pdf\` or \`json\`: ` +
      'opening balance, every ledger row, the orders closed in the period and those open at its end, closing balance and ' +
      'equity. Answers 202 at once; read the status at `status_url`, then download.',
    tags: ['reports'],
    access: { kind: 'customer' },
    body: StatementRequestSchema,
    responses: {
      202: { description: 'Queued', schema: ReportAcceptedSchema },
      404: { description: 'No such account of yours' },
    },
    handler: async ({ body, em, services, caller }) =>
      json(
        202,
        await requestReport(
          em,
          services.jobs,
          { kind: 'customer', customerId: asCustomer(caller).customerId },
          { type: 'account_statement', format: body.format, params: parseStatement(body) },
        ),
      ),
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/statements/{statement_id}',
    operationId: 'getMyStatement',
    summary: 'One of your statements: its status, and where to download it once completed',
    tags: ['reports'],
    access: { kind: 'customer' },
    params: StatementIdParam,
    responses: { 200: { description: 'The statement', schema: ReportSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, em, caller }) =>
      json(
        200,
        reportView(
          await findReport(em, params.statement_id, { kind: 'customer', customerId: asCustomer(caller).customerId }),
          'customer',
        ),
      ),
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/statements/{statement_id}/download',
    operationId: 'downloadMyStatement',
    summary: 'The file of one of your completed statements',
    tags: ['reports'],
    access: { kind: 'customer' },
    params: StatementIdParam,
    raw: true,
    responses: DOWNLOAD_RESPONSES,
    handler: (ctx) => sendFile(ctx, ctx.params.statement_id, { kind: 'customer', customerId: asCustomer(ctx.caller).customerId }),
  }),
];
