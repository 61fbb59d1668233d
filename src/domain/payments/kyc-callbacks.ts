import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { CustomerDocument, DOCUMENT_STATUSES } from '../../entities/customer-document.entity';
import { Customer } from '../../entities/customer.entity';
import { InboundCall, type InboundOutcome } from '../../entities/inbound-call.entity';
import { Integration } from '../../entities/integration.entity';
import { executeNamed } from '../../db/bound-statement';
import type { StaffCaller } from '../../platform/caller';
import { AppError, errors, ValidationFailure, type ValidationItem } from '../../platform/errors';
import type { SecretBox } from '../../platform/secret-box';
import { recordAudit, type IntegrationActor } from '../audit/audit';
import { decideDocument } from '../compliance/documents';
import { standardWebhooksSigned } from './adapters';
import { callbackSecrets } from './integrations';
import { addressAllowed } from './integration-views';
import {
  claimAndApply as claimInLog,
  inboundView,
  recordInbound,
  signatureInvalid,
  type InboundRequest,
  type InboundView,
} from './inbound-log';
import { CLAIM_FAILED_INBOUND, CLAIM_INBOUND, SETTLE_FAILED_INBOUND } from './payments.queries';

/**
 * A KYC provider's review callback (`POST /api/integrations/kyc/{integration_id}/callbacks`),
 * in the form Sumsub's `applicantReviewed` webhook takes: signed and logged as payment
 * callbacks are (Standard Webhooks headers under the integration's secret, the inbound log,
 * one effect per (integration, external id, answer)), and applied as the compliance desk's
 * approve (`GREEN`) or reject (`RED`) of the customer's documents, audited as
 * `integration:<id>`. Every KYC adapter reads this one body; they differ only in name.
 */
export const KYC_ADAPTERS = ['sumsub_like', 'generic_hmac'] as const;

export const KycCallbackSchema = z
  .object({
    type: z
      .string()
      .min(1)
      .max(64)
      .default('applicantReviewed')
      .describe('`applicantReviewed` (the default) decides documents; any other type is logged and ignored'),
    external_id: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe("The provider's id of this review (or `correlationId`; without either, the `webhook-id` header)"),
    correlationId: z.string().min(1).max(128).optional(),
    applicantId: z.string().min(1).max(128).optional().describe("The provider's applicant id (kept in the log only)"),
    externalUserId: z.uuid().optional().describe('Our customer id, as the applicant was created with (or `customer_id`)'),
    customer_id: z.uuid().optional(),
    document_ids: z
      .array(z.uuid())
      .min(1)
      .max(20)
      .optional()
      .describe("The customer's documents the review covers; without it, every pending document of the customer"),
    reviewResult: z
      .object({
        reviewAnswer: z.enum(['GREEN', 'RED']),
        rejectLabels: z.array(z.string().min(1).max(64)).max(20).optional(),
        moderationComment: z.string().max(400).optional(),
      })
      .optional(),
  })
  .superRefine((b, ctx) => {
    if (!b.externalUserId && !b.customer_id)
      ctx.addIssue({ code: 'custom', path: ['externalUserId'], message: 'externalUserId or customer_id is required' });
    if (b.type === 'applicantReviewed' && !b.reviewResult)
      ctx.addIssue({ code: 'custom', path: ['reviewResult'], message: 'An applicantReviewed call carries its reviewResult' });
  });

export const KycCallbackAnswerSchema = z.object({
  outcome: z.enum(['processed', 'duplicate']),
  inbound_id: z.uuid(),
  documents: z
    .array(z.object({ id: z.uuid(), status: z.enum(DOCUMENT_STATUSES) }).meta({ id: 'KycDecidedDocument' }))
    .describe('The documents this call decided; empty for a duplicate or a call that decided nothing'),
});
export type KycCallbackAnswer = z.output<typeof KycCallbackAnswerSchema>;

interface KycReport {
  external_id: string;
  type: string;
  customer_id: string;
  document_ids: string[] | undefined;
  answer: 'GREEN' | 'RED' | undefined;
  reason: string;
}

/** A review that names a customer or document we do not have: logged `failed`, answered 404, reprocessable. */
class UnknownSubject extends Error {}

const dedupeKey = (r: KycReport) => `${r.external_id}:${r.answer ?? r.type}`;

/**
 * The body read as a review. Its key is the body's `external_id` (or `correlationId`), else the
 * id the call was signed under (`webhook-id`, which a provider keeps across retries of one
 * message): a review with neither is 422 at `external_id`.
 */
function parseReport(
  body: unknown,
  messageId: string | null,
): { ok: true; report: KycReport } | { ok: false; issues: ValidationItem[] } {
  const parsed = KycCallbackSchema.safeParse(body);
  const externalId = parsed.success ? (parsed.data.external_id ?? parsed.data.correlationId ?? messageId) : null;
  if (parsed.success && !externalId)
    return {
      ok: false,
      issues: [{ loc: ['body', 'external_id'], msg: 'external_id or correlationId is required', type: 'missing' }],
    };
  if (!parsed.success)
    return {
      ok: false,
      issues: parsed.error.issues.map((i) => ({
        loc: ['body', ...(i.path as (string | number)[])],
        msg: i.message,
        type: i.code === 'invalid_type' && i.input === undefined ? 'missing' : 'value_error',
      })),
    };
  const b = parsed.data;
  const labels = b.reviewResult?.rejectLabels ?? [];
  const reason =
    [labels.join(', '), b.reviewResult?.moderationComment ?? ''].filter((s) => s.trim()).join(': ') ||
    'Not accepted by the verification provider';
  return {
    ok: true,
    report: {
      external_id: externalId!.slice(0, 128),
      type: b.type,
      customer_id: (b.externalUserId ?? b.customer_id)!,
      document_ids: b.document_ids,
      answer: b.reviewResult?.reviewAnswer,
      reason: reason.slice(0, 500),
    },
  };
}

function readJson(raw: string | null | undefined): unknown {
  try {
    return JSON.parse(raw ?? '');
  } catch {
    return undefined;
  }
}

interface ReviewEffect {
  documents: Array<{ id: string; status: (typeof DOCUMENT_STATUSES)[number] }>;
  note: string | null;
}

/** Decides the documents a review covers, in the caller's transaction; documents already decided are left as they are. */
async function applyReview(tx: EntityManager, integrationId: string, report: KycReport): Promise<ReviewEffect> {
  if (report.type !== 'applicantReviewed' || !report.answer)
    return { documents: [], note: `${report.type.slice(0, 64)}: not a review, nothing decided` };
  if (!(await tx.findOne(Customer, report.customer_id, { fields: ['id'] })))
    throw new UnknownSubject(`No customer ${report.customer_id}`);
  let docs: CustomerDocument[];
  if (report.document_ids) {
    docs = await tx.find(CustomerDocument, { id: { $in: report.document_ids }, customer: report.customer_id });
    const missing = report.document_ids.find((id) => !docs.some((d) => d.id === id));
    if (missing) throw new UnknownSubject(`No document ${missing} of customer ${report.customer_id}`);
  } else
    docs = await tx.find(
      CustomerDocument,
      { customer: report.customer_id, status: 'pending' },
      { orderBy: { createdAt: 'asc' } },
    );
  const actor: IntegrationActor = { kind: 'integration', integrationId };
  const decided: ReviewEffect['documents'] = [];
  for (const doc of docs.filter((d) => d.status === 'pending')) {
    const view = await decideDocument(
      tx,
      actor,
      doc.id,
      report.answer === 'GREEN' ? { kind: 'approve' } : { kind: 'reject', reason: report.reason },
    );
    decided.push({ id: view.id, status: view.status });
  }
  const skipped = docs.length - decided.length;
  const note =
    decided.length === 0
      ? 'no pending document to decide'
      : skipped > 0
        ? `${skipped} document(s) already decided, left as they were`
        : null;
  return { documents: decided, note };
}

/** A review through the inbound log's one transaction (claimAndApply): an unknown customer or document is 404. */
async function claimAndApply(
  em: EntityManager,
  integrationId: string,
  report: KycReport,
  claim: (tx: EntityManager, inboundId: string) => Promise<boolean>,
  recordOther: (error: string | undefined) => Promise<string>,
): Promise<KycCallbackAnswer> {
  const result = await claimInLog<ReviewEffect>(em, integrationId, {
    claim,
    recordOther,
    apply: async (tx) => {
      const effect = await applyReview(tx, integrationId, report);
      return { effect, note: effect.note };
    },
    explain: (err) =>
      err instanceof UnknownSubject
        ? { message: err.message, answer: errors.notFound('Customer or document') }
        : err instanceof AppError
          ? { message: err.message }
          : undefined,
  });
  if (result.outcome === 'duplicate') return { outcome: 'duplicate', inbound_id: result.inboundId, documents: [] };
  return { outcome: 'processed', inbound_id: result.inboundId, documents: result.effect.documents };
}

export async function receiveKycCallback(
  em: EntityManager,
  box: SecretBox,
  integrationId: string,
  req: InboundRequest,
): Promise<KycCallbackAnswer> {
  const integration = await em.findOne(Integration, { id: integrationId, kind: 'kyc' });
  if (!integration) throw errors.notFound('KYC integration');
  // As for payment providers: `config.allowed_ips`, when set, names the only addresses it calls from.
  const allowed = integration.config.allowed_ips;
  if (Array.isArray(allowed) && allowed.length && !addressAllowed(req.sourceIp, allowed.map(String))) {
    await recordInbound(em, integration.id, req, {
      outcome: 'rejected',
      signatureValid: false,
      error: `source address ${req.sourceIp ?? 'unknown'} is outside allowed_ips`,
    });
    throw signatureInvalid('The callback is not signed by this provider');
  }
  if (!standardWebhooksSigned(req, await callbackSecrets(em, box, integration))) {
    await recordInbound(em, integration.id, req, {
      outcome: 'rejected',
      signatureValid: false,
      error: 'signature invalid or timestamp outside 5 minutes',
    });
    throw signatureInvalid('The callback is not signed by this provider');
  }
  if (!integration.enabled) {
    await recordInbound(em, integration.id, req, { outcome: 'rejected', signatureValid: true, error: 'integration disabled' });
    throw errors.conflict('INTEGRATION_DISABLED', 'This integration is disabled');
  }
  const messageId = req.headers['webhook-id'];
  const parsed = parseReport(readJson(req.rawBody), typeof messageId === 'string' && messageId ? messageId : null);
  if (!parsed.ok) {
    await recordInbound(em, integration.id, req, {
      outcome: 'failed',
      signatureValid: true,
      error: parsed.issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '),
    });
    throw new ValidationFailure(parsed.issues);
  }
  const report = parsed.report;
  return claimAndApply(
    em,
    integration.id,
    report,
    async (tx, id) =>
      (
        await executeNamed<{ id: string }>(
          tx,
          CLAIM_INBOUND.bind({
            id,
            integration_id: integration.id,
            source_ip: req.sourceIp,
            external_id: report.external_id,
            dedupe_key: dedupeKey(report),
            body: req.rawBody ?? null,
          }),
        )
      ).length > 0,
    async (error) =>
      (
        await recordInbound(em, integration.id, req, {
          outcome: error === undefined ? 'duplicate' : 'failed',
          signatureValid: true,
          error,
          externalId: report.external_id,
        })
      ).id,
  );
}

/**
 * Re-runs a failed KYC call from its stored body (its signature was checked when it came), as
 * payment callbacks are reprocessed: it takes its key as it is applied, so it takes effect once.
 * Audited; a call that still cannot apply stays `failed` with the reason.
 */
export async function reprocessKycInbound(em: EntityManager, actor: StaffCaller, call: InboundCall): Promise<InboundView> {
  const parsed = parseReport(readJson(call.body), call.externalId ?? null);
  if (!parsed.ok)
    throw errors.conflict('INBOUND_NOT_REPROCESSABLE', 'The stored body is not a valid callback: reprocessing cannot mend it');
  const report = parsed.report;
  const before = inboundView(call);
  const audit = (tx: EntityManager, outcome: InboundOutcome, error: string | null) =>
    recordAudit(tx, actor, {
      action: 'integration.inbound_reprocessed',
      entityType: 'integration_inbound',
      entityId: call.id,
      before,
      after: { outcome, error },
    });
  try {
    await claimAndApply(
      em,
      call.integration.id,
      report,
      async (tx) => {
        const rows = await executeNamed(tx, CLAIM_FAILED_INBOUND.bind({ id: call.id, dedupe_key: dedupeKey(report) }));
        if (rows.length === 0) throw errors.conflict('INBOUND_NOT_FAILED', 'The call is no longer failed');
        audit(tx, 'processed', null);
        return true;
      },
      (error) =>
        em.fork().transactional(async (tx) => {
          const outcome = error === undefined ? 'duplicate' : 'failed';
          await executeNamed(tx, SETTLE_FAILED_INBOUND.bind({ id: call.id, outcome, error: error ?? null }));
          audit(tx, outcome, error ?? null);
          return call.id;
        }),
    );
  } catch (err) {
    // A review that still does not apply is recorded on the call, which is answered as it stands.
    if (!(err instanceof AppError) || err.code === 'INBOUND_NOT_FAILED') throw err;
  }
  return inboundView(await em.fork().findOneOrFail(InboundCall, call.id));
}
