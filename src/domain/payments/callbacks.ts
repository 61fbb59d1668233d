import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { InboundCall, type InboundOutcome } from '../../entities/inbound-call.entity';
import { DEPOSIT_STATUSES } from '../../entities/deposit-intent.entity';
import { Integration } from '../../entities/integration.entity';
import { AppError, errors, ValidationFailure } from '../../platform/errors';
import type { SecretBox } from '../../platform/secret-box';
import { recordAudit } from '../audit/audit';
import type { StaffCaller } from '../../platform/caller';
import type { QuoteStore } from '../prices/quote-store';
import { applyPaymentReport, UnknownIntent, type CallbackEffect } from './deposit-intents';
import { pspAdapter, type PaymentReport } from './adapters';
import { callbackSecrets } from './integrations';
import { addressAllowed, pspConfig } from './integration-views';
import { executeNamed } from '../../db/bound-statement';
import { CLAIM_FAILED_INBOUND, CLAIM_INBOUND, SETTLE_FAILED_INBOUND } from './payments.queries';
import {
  claimAndApply as claimInLog,
  inboundView,
  recordInbound,
  signatureInvalid,
  type InboundRequest,
  type InboundView,
} from './inbound-log';
import { reprocessKycInbound } from './kyc-callbacks';

/**
 * A provider's callback (`POST /api/integrations/payments/{provider_id}/callbacks`): verified
 * by its adapter's signature and the provider's allowed addresses, recorded in the inbound log
 * whatever its fate, deduplicated on (provider, external id, status), and applied to its
 * intent in the transaction that claims it in the log.
 */

export const CallbackAnswerSchema = z.object({
  outcome: z.enum(['processed', 'duplicate']),
  inbound_id: z.uuid(),
  deposit_status: z.enum(DEPOSIT_STATUSES).nullable().describe('The intent after this call; null for a duplicate'),
});
export type CallbackAnswer = z.output<typeof CallbackAnswerSchema>;

const dedupeKey = (r: { external_id: string; status: string }) => `${r.external_id}:${r.status}`;

export interface CallbackDeps {
  box: SecretBox;
  quotes: QuoteStore;
  /** Told of each report ignored as an illegal transition (the caller logs it). */
  onIgnored?: (effect: CallbackEffect, report: PaymentReport) => void;
}

export async function receivePaymentCallback(
  em: EntityManager,
  deps: CallbackDeps,
  providerId: string,
  req: InboundRequest,
): Promise<CallbackAnswer> {
  const provider = await em.findOne(Integration, { id: providerId, kind: 'psp' });
  if (!provider) throw errors.notFound('Payment provider');
  const allowed = pspConfig(provider).allowed_ips;
  if (allowed?.length && !addressAllowed(req.sourceIp, allowed)) {
    await recordInbound(em, provider.id, req, {
      outcome: 'rejected',
      signatureValid: false,
      error: `source address ${req.sourceIp ?? 'unknown'} is outside allowed_ips`,
    });
    throw signatureInvalid('The callback is not signed by this provider');
  }
  const adapter = pspAdapter(provider.adapter);
  if (!adapter.verify(req, await callbackSecrets(em, deps.box, provider))) {
    await recordInbound(em, provider.id, req, {
      outcome: 'rejected',
      signatureValid: false,
      error: 'signature invalid or timestamp outside 5 minutes',
    });
    throw signatureInvalid('The callback is not signed by this provider');
  }
  if (!provider.enabled) {
    await recordInbound(em, provider.id, req, { outcome: 'rejected', signatureValid: true, error: 'provider disabled' });
    throw errors.conflict('PROVIDER_DISABLED', 'This payment provider is disabled');
  }
  let json: unknown;
  try {
    json = JSON.parse(req.rawBody!);
  } catch {
    json = undefined;
  }
  const parsed = adapter.parse(json);
  if (!parsed.ok) {
    const items = parsed.issues;
    await recordInbound(em, provider.id, req, {
      outcome: 'failed',
      signatureValid: true,
      error: items.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '),
    });
    throw new ValidationFailure(items);
  }
  const report = parsed.report;
  return claimAndApply(
    em,
    deps,
    provider.id,
    report,
    async (tx, id) => {
      const rows = await executeNamed<{ id: string }>(
        tx,
        CLAIM_INBOUND.bind({
          id,
          integration_id: provider.id,
          source_ip: req.sourceIp,
          external_id: report.external_id,
          dedupe_key: dedupeKey(report),
          body: req.rawBody ?? null,
        }),
      );
      return rows.length > 0;
    },
    async (error) =>
      (
        await recordInbound(em, provider.id, req, {
          outcome: error === undefined ? 'duplicate' : 'failed',
          signatureValid: true,
          error,
          externalId: report.external_id,
        })
      ).id,
  );
}

/**
 * A payment report through the inbound log's one transaction (claimAndApply): an unknown
 * intent is 404; anything unexpected is rethrown (500, and the provider's retry or a reprocess
 * may take it later).
 */
async function claimAndApply(
  em: EntityManager,
  deps: CallbackDeps,
  providerId: string,
  report: PaymentReport,
  claim: (tx: EntityManager, inboundId: string) => Promise<boolean>,
  recordOther: (error: string | undefined) => Promise<string>,
): Promise<CallbackAnswer> {
  const result = await claimInLog<CallbackEffect>(em, providerId, {
    claim,
    recordOther,
    apply: async (tx) => {
      const effect = await applyPaymentReport(tx, deps.quotes, providerId, report);
      return { effect, note: effect.applied ? null : (effect.note ?? null) };
    },
    explain: (err) =>
      err instanceof UnknownIntent ? { message: err.message, answer: errors.notFound('Deposit intent') } : undefined,
  });
  if (result.outcome === 'duplicate') return { outcome: 'duplicate', inbound_id: result.inboundId, deposit_status: null };
  if (!result.effect.applied) deps.onIgnored?.(result.effect, report);
  return { outcome: 'processed', inbound_id: result.inboundId, deposit_status: result.effect.intent.status };
}

/**
 * Re-runs a `failed` inbound call from its stored body, as if it arrived again (its signature
 * was checked when it did). Idempotent: the call takes its dedupe key as it is applied, so a
 * second reprocess, or the provider's own retry meanwhile, finds the report taken. Audited.
 */
export async function reprocessInbound(
  em: EntityManager,
  deps: CallbackDeps,
  actor: StaffCaller,
  integrationId: string,
  inboundId: string,
): Promise<InboundView> {
  const call = await em.findOne(InboundCall, { id: inboundId, integration: integrationId });
  if (!call) throw errors.notFound('Inbound call');
  if (call.outcome !== 'failed')
    throw errors.conflict('INBOUND_NOT_FAILED', `The call was ${call.outcome}: only a failed call is reprocessed`);
  const integration = await em.findOneOrFail(Integration, integrationId);
  if (integration.kind === 'kyc') return reprocessKycInbound(em, actor, call);
  if (integration.kind !== 'psp') throw errors.conflict('INBOUND_NOT_FAILED', 'Only payment and KYC callbacks are reprocessed');
  let json: unknown;
  try {
    json = JSON.parse(call.body ?? '');
  } catch {
    json = undefined;
  }
  const parsed = pspAdapter(integration.adapter).parse(json);
  if (!parsed.ok)
    throw errors.conflict('INBOUND_NOT_REPROCESSABLE', 'The stored body is not a valid callback: reprocessing cannot mend it');
  const report = parsed.report;
  const before = inboundView(call);
  const setOutcome = (outcome: InboundOutcome, error: string | null) =>
    em.fork().transactional(async (tx) => {
      await executeNamed(tx, SETTLE_FAILED_INBOUND.bind({ id: inboundId, outcome, error }));
      recordAudit(tx, actor, {
        action: 'integration.inbound_reprocessed',
        entityType: 'integration_inbound',
        entityId: inboundId,
        before,
        after: { outcome, error },
      });
      return inboundId;
    });
  try {
    await claimAndApply(
      em,
      deps,
      integrationId,
      report,
      async (tx) => {
        const rows = await executeNamed<{ id: string }>(
          tx,
          CLAIM_FAILED_INBOUND.bind({ id: inboundId, dedupe_key: dedupeKey(report) }),
        );
        if (rows.length === 0) throw errors.conflict('INBOUND_NOT_FAILED', 'The call is no longer failed');
        recordAudit(tx, actor, {
          action: 'integration.inbound_reprocessed',
          entityType: 'integration_inbound',
          entityId: inboundId,
          before,
          after: { outcome: 'processed' },
        });
        return true;
      },
      (error) => setOutcome(error === undefined ? 'duplicate' : 'failed', error ?? null),
    );
  } catch (err) {
    // A report that still does not apply (its intent unknown) is recorded on the call, which is answered as it stands.
    if (!(err instanceof AppError) || err.code === 'INBOUND_NOT_FAILED') throw err;
  }
  const fresh = await em.fork().findOneOrFail(InboundCall, inboundId);
  return inboundView(fresh);
}
