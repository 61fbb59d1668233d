import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { executeBound } from '../../db/bound-statement';
import {
  Report,
  REPORT_FORMATS,
  REPORT_STATUSES,
  REPORT_TYPES,
  type ReportFormat,
  type ReportScope,
  type ReportType,
} from '../../entities/report.entity';
import type { JobProducer } from '../../jobs/job-producer';
import { ReportBuildJob } from '../../jobs/report-build.job';
import { errors } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import type { StaffCaller } from '../../platform/caller';
import { ACCOUNT_BY_LOGIN, GROUP_EXISTS } from './reports.queries';
import { readChunks } from './report-store';
import { customerScopeOf, EVERY_CUSTOMER, inScopeOr404, type CustomerScope } from '../../platform/customer-scope';

export const CONTENT_TYPES: Record<ReportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  pdf: 'application/pdf',
  json: 'application/json',
};

/** Where a report's routes live: staff's reports, or a customer's own statements. */
export type ReportAudience = { kind: 'staff'; actor: StaffCaller } | { kind: 'customer'; customerId: string };

/** Whose accounts an audience may report on (see CustomerScope). */
function audienceScope(audience: ReportAudience): CustomerScope {
  return audience.kind === 'customer' ? { customerId: audience.customerId, staff: null } : customerScopeOf(audience.actor);
}

const basePath = (audience: ReportAudience['kind']) =>
  audience === 'staff' ? '/api/backoffice/reports' : '/customers/me/statements';

export const ReportAcceptedSchema = z.object({
  id: z.uuid(),
  status_url: z
    .string()
    .meta({ format: 'uri-reference' })
    .describe("Where the report's status is read: `GET` it until `status` is `completed` or `failed`"),
});

export const ReportSchema = z.object({
  id: z.uuid(),
  type: z.enum(REPORT_TYPES),
  format: z.enum(REPORT_FORMATS),
  status: z
    .enum(REPORT_STATUSES)
    .describe(
      '`queued` until a worker starts the build, `running` while it writes the file, then `completed` or `failed`. ' +
        'A report whose build job is lost is queued again once, then `failed` with the reason; a build past an hour is `failed`',
    ),
  rows: z.int().nullable().describe('Data rows in the file (every section), once completed'),
  bytes: z.int().nullable().describe("The file's size in bytes, once completed"),
  created_at: z.iso.datetime(),
  finished_at: z.iso.datetime().nullable(),
  error: z.string().nullable().describe('Why the build failed; null otherwise'),
  download_url: z
    .string()
    .meta({ format: 'uri-reference' })
    .nullable()
    .describe('Where the file is downloaded, once completed; null before'),
  scope: z
    .object({
      data_scope: z.enum(['own', 'team', 'all']),
      user_id: z.uuid().nullable(),
      team_ids: z.array(z.uuid()),
    })
    .nullable()
    .describe('Staff reports: the data scope of who asked, as it was then; the report holds only rows of customers in it'),
});
export type ReportView = z.output<typeof ReportSchema>;

export function reportView(report: Report, audience: ReportAudience['kind']): ReportView {
  const base = `${basePath(audience)}/${report.id}`;
  return {
    id: report.id,
    type: report.type,
    format: report.format,
    status: report.status,
    rows: report.rows === null || report.rows === undefined ? null : Number(report.rows),
    bytes: report.bytes === null || report.bytes === undefined ? null : Number(report.bytes),
    created_at: report.createdAt.toISOString(),
    finished_at: report.finishedAt?.toISOString() ?? null,
    error: report.error ?? null,
    download_url: report.status === 'completed' ? `${base}/download` : null,
    scope: report.scope ?? null,
  };
}

export interface ReportRequest {
  type: ReportType;
  format: ReportFormat;
  /** Already validated against the type's params schema. */
  params: Record<string, unknown>;
}

/**
 * Records a report and queues its build after the commit. What the params name must exist
 * (an unknown login or group is 404), and a customer may only ask about its own accounts
 * (another's login is 404 too, as if it did not exist).
 */
export async function requestReport(
  em: EntityManager,
  jobs: Pick<JobProducer, 'enqueue'>,
  audience: ReportAudience,
  request: ReportRequest,
): Promise<{ id: string; status_url: string }> {
  const { params } = request;
  if (params.login !== undefined) {
    const [account] = await executeBound<{ customer_id: string }>(em, ACCOUNT_BY_LOGIN.bind({ login: String(params.login) }));
    await inScopeOr404(em, audienceScope(audience), account, (a) => a.customer_id, 'Account');
  }
  if (typeof params.group_id === 'string') {
    const [group] = await executeBound(em, GROUP_EXISTS.bind({ group_id: params.group_id }));
    if (!group) throw errors.notFound('Group');
  }
  const report = em.create(Report, {
    type: request.type,
    format: request.format,
    params,
    requestedBy: audience.kind === 'staff' ? audience.actor.userId : null,
    customerId: audience.kind === 'customer' ? audience.customerId : null,
    scope: audience.kind === 'staff' ? recordedScope(audience.actor) : null,
  });
  await em.flush();
  try {
    await jobs.enqueue(ReportBuildJob, { report_id: report.id });
  } catch (err) {
    await em.nativeUpdate(
      Report,
      { id: report.id, status: 'queued' },
      { status: 'failed', error: 'The job queue was unavailable', finishedAt: new Date() },
    );
    throw err;
  }
  return { id: report.id, status_url: `${basePath(audience.kind)}/${report.id}` };
}

/** A report the audience may see: staff see every report, a customer only its own statements. */
export async function findReport(em: EntityManager, id: string, audience: ReportAudience): Promise<Report> {
  // Staff limited to their customers see only the reports they asked for: another's may hold rows outside their scope.
  const staffLimited = audience.kind === 'staff' && audience.actor.dataScope.kind !== 'all';
  const where =
    audience.kind === 'customer'
      ? { id, customerId: audience.customerId }
      : staffLimited
        ? { id, requestedBy: audience.actor.userId }
        : { id };
  const report = await em.findOne(Report, where, {
    refresh: true,
  });
  if (!report) throw errors.notFound('Report');
  return report;
}

export interface ReportDownload {
  contentType: string;
  fileName: string;
  bytes: number;
  chunks: AsyncIterable<Buffer>;
}

/**
 * A completed report's file, read a chunk at a time. Each download is audited (who, which
 * report) before the first byte goes out; a report not yet completed is 409 REPORT_NOT_READY.
 */
export async function openDownload(em: EntityManager, report: Report, audience: ReportAudience): Promise<ReportDownload> {
  if (report.status !== 'completed')
    throw errors.conflict(
      'REPORT_NOT_READY',
      report.status === 'failed' ? `The report failed: ${report.error ?? 'unknown error'}` : `The report is ${report.status}`,
    );
  recordAudit(em, audience.kind === 'staff' ? audience.actor : 'system', {
    action: 'report.downloaded',
    entityType: 'report',
    entityId: report.id,
    after: {
      type: report.type,
      format: report.format,
      bytes: Number(report.bytes),
      ...(audience.kind === 'customer' ? { customer_id: audience.customerId } : {}),
    },
  });
  await em.flush();
  return {
    contentType: CONTENT_TYPES[report.format],
    fileName: `${fileStem(report)}.${report.format}`,
    bytes: Number(report.bytes),
    chunks: readChunks(em, report.id),
  };
}

/** A file name that says what the report is; only safe characters, so the header needs no quoting rules. */
function fileStem(report: Report): string {
  const p = report.params;
  const parts = [report.type.replace(/_/g, '-'), p.login, p.from ?? p.trading_date, p.to].filter((v) => v !== undefined);
  return parts.map((v) => String(v).replace(/[^A-Za-z0-9-]/g, '')).join('-') || report.id;
}

/** What a staff report records of its asker's scope. */
function recordedScope(actor: StaffCaller): ReportScope {
  const s = actor.dataScope;
  return s.kind === 'all'
    ? { data_scope: 'all', user_id: null, team_ids: [] }
    : { data_scope: s.kind, user_id: s.userId, team_ids: [...s.teamIds] };
}

/** The recorded scope as the build applies it; a report with none (a customer's statement) reads what its params name. */
export function reportScopeOf(recorded: ReportScope | null): CustomerScope {
  if (!recorded || recorded.data_scope === 'all' || !recorded.user_id) return EVERY_CUSTOMER;
  return {
    customerId: null,
    staff: { userId: recorded.user_id, teamIds: recorded.data_scope === 'team' ? recorded.team_ids : [] },
  };
}
