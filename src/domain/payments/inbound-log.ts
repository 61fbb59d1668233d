import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { INBOUND_OUTCOMES, InboundCall, type InboundOutcome } from '../../entities/inbound-call.entity';
import { Integration } from '../../entities/integration.entity';
import { AppError, errors } from '../../platform/errors';
import { findPage, type Paging } from '../../db/find-page';
import { executeNamed } from '../../db/bound-statement';
import { NOTE_INBOUND, TOUCH_INTEGRATION, TOUCH_INTEGRATION_SETTLED, TOUCH_INTEGRATION_WITH_ERROR } from './payments.queries';

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

/** What a report's transaction came to: applied (with a note when its state allowed no change), or a duplicate. */
export type ClaimOutcome<E> =
  { outcome: 'processed'; inboundId: string; effect: E } | { outcome: 'duplicate'; inboundId: string };

/**
 * The one transaction of an inbound report, for every kind of integration: `claim` takes its
 * key in the inbound log (false: another call holds it, the report is a duplicate), then
 * `apply` applies it; a `note` says why it changed nothing. A duplicate, or a failure (the claim
 * rolled back with everything else), is recorded by `recordOther` in a transaction of its own.
 * A unique violation inside (another call took the effect's own key first) is a duplicate too.
 * `explain` names a failure for the log and gives the answer to throw instead of it (a 404 for
 * an unknown subject), or nothing to rethrow it as is.
 *
 * The integration's last call is marked after the commit, at most once a second: marked inside
 * the transaction, every call of one provider would wait on that row until the one before it
 * committed.
 */
export async function claimAndApply<E>(
  em: EntityManager,
  integrationId: string,
  steps: {
    claim: (tx: EntityManager, inboundId: string) => Promise<boolean>;
    apply: (tx: EntityManager) => Promise<{ effect: E; note?: string | null }>;
    recordOther: (error: string | undefined) => Promise<string>;
    explain: (err: unknown) => { message: string; answer?: Error } | undefined;
  },
): Promise<ClaimOutcome<E>> {
  const inboundId = randomUUID();
  let applied: { effect: E } | undefined;
  try {
    applied = await em.fork().transactional(async (tx) => {
      if (!(await steps.claim(tx, inboundId))) return undefined;
      const { effect, note } = await steps.apply(tx);
      if (note) await executeNamed(tx, NOTE_INBOUND.bind({ id: inboundId, error: note }));
      return { effect };
    });
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException)
      return { outcome: 'duplicate', inboundId: await steps.recordOther(undefined) };
    const explained = steps.explain(err);
    await steps.recordOther(explained?.message ?? `processing failed: ${err instanceof Error ? err.name : 'error'}`);
    throw explained?.answer ?? err;
  }
  if (!applied) return { outcome: 'duplicate', inboundId: await steps.recordOther(undefined) };
  await executeNamed(em.fork(), TOUCH_INTEGRATION_SETTLED.bind({ id: integrationId }));
  return { outcome: 'processed', inboundId, effect: applied.effect };
}
