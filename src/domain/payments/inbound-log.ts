import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { INBOUND_OUTCOMES, InboundCall, type InboundOutcome } from '../../entities/inbound-call.entity';
import { Integration } from '../../entities/integration.entity';
import { AppError, errors } from '../../platform/errors';
import { findPage, type Paging } from '../../db/find-page';
import { executeNamed } from '../../db/bound-statement';
import { TOUCH_INTEGRATION, TOUCH_INTEGRATION_WITH_ERROR } from './payments.queries';

/**
 * The inbound log every call to `/api/integrations/...` is written to, whoever sent it (a
 * payment provider, a KYC provider): one row per call with its source, whether its signature
 * verified, its outcome and its body (kept 30 days), and the integration's last call.
 */

export const InboundSchema = z.object({
  id: z.uuid(),
  integration_id: z.uuid(),
  received_at: z.iso.datetime(),
  source_ip: z.string().nullable(),
  signature_valid: z.boolean(),
  external_id: z.string().nullable(),
  outcome: z.enum(INBOUND_OUTCOMES),
  error: z.string().nullable(),
  body: z.string().nullable().describe('The body as received (kept 30 days)'),
});
export type InboundView = z.output<typeof InboundSchema>;

export function inboundView(c: InboundCall): InboundView {
  return {
    id: c.id,
    integration_id: c.integration.id,
    received_at: c.createdAt.toISOString(),
    source_ip: c.sourceIp ?? null,
    signature_valid: c.signatureValid,
    external_id: c.externalId ?? null,
    outcome: c.outcome,
    error: c.error ?? null,
    body: c.body ?? null,
  };
}

export interface InboundRequest {
  rawBody: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  sourceIp: string | null;
}

export const signatureInvalid = (detail: string) => new AppError(401, 'SIGNATURE_INVALID', detail);

function bestEffortExternalId(raw: string | undefined): string | null {
  try {
    // A KYC provider names its report `correlationId`.
    const parsed = JSON.parse(raw ?? '') as { external_id?: unknown; correlationId?: unknown };
    const v = parsed.external_id ?? parsed.correlationId;
    return typeof v === 'string' ? v.slice(0, 128) : null;
  } catch {
    return null;
  }
}

/** Writes one inbound row that took no effect (rejected, duplicate, failed), with the integration's last call, in its own transaction. */
export async function recordInbound(
  em: EntityManager,
  integrationId: string,
  req: InboundRequest,
  fields: { outcome: InboundOutcome; signatureValid: boolean; error?: string | null; externalId?: string | null },
): Promise<InboundCall> {
  return em.fork().transactional(async (tx) => {
    const call = tx.create(InboundCall, {
      integration: integrationId,
      sourceIp: req.sourceIp,
      signatureValid: fields.signatureValid,
      externalId: fields.externalId ?? bestEffortExternalId(req.rawBody),
      outcome: fields.outcome,
      error: fields.error?.slice(0, 500) ?? null,
      body: req.rawBody ?? null,
    });
    await touchIntegration(tx, integrationId, fields.outcome === 'duplicate' ? undefined : (fields.error ?? null));
    return call;
  });
}

/** Marks the integration's last inbound call; `error` replaces its last error when given (null clears it). */
export async function touchIntegration(tx: EntityManager, id: string, error: string | null | undefined) {
  if (error === undefined) await executeNamed(tx, TOUCH_INTEGRATION.bind({ id }));
  else await executeNamed(tx, TOUCH_INTEGRATION_WITH_ERROR.bind({ id, error: error?.slice(0, 500) ?? null }));
}

export const InboundQuery = z.object({ outcome: z.enum(INBOUND_OUTCOMES).optional() });

export async function listInbound(em: EntityManager, integrationId: string, outcome: InboundOutcome | undefined, paging: Paging) {
  if (!(await em.findOne(Integration, integrationId, { fields: ['id'] }))) throw errors.notFound('Integration');
  return findPage(
    em,
    InboundCall,
    { integration: integrationId, ...(outcome ? { outcome } : {}) },
    paging,
    { orderBy: { createdAt: 'desc', id: 'desc' } },
    inboundView,
  );
}
