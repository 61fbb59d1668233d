import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { DepositIntent } from '../../entities/deposit-intent.entity';
import { Integration } from '../../entities/integration.entity';
import { money } from '../../platform/decimal';
import { errors } from '../../platform/errors';
import type { SecretBox } from '../../platform/secret-box';
import { signedSimulatorCall } from './adapters';
import { callbackSecrets } from './integrations';

export const SimulatedPaymentSchema = z.strictObject({
  outcome: z.enum(['completed', 'failed', 'charged_back']),
  amount: z
    .number()
    .gt(0)
    .max(1_000_000_000_000)
    .optional()
    .describe(
      'What the provider reports paid, in the intent currency; default the intent amount (another amount puts it in review)',
    ),
});
export type SimulatedPayment = z.output<typeof SimulatedPaymentSchema>;

export const SimulatedCallbackSchema = z.object({
  intent_id: z.uuid(),
  external_id: z.string(),
  callback_status: z.int().describe('The status the public callback route answered'),
  callback_body: z.unknown().describe('What it answered'),
});

/**
 * The simulator provider: what a real provider does after the customer pays, sent as a real
 * signed HTTP callback to the public route (`callbackBase` is this service's own address), so
 * the whole path (signature, allowed addresses, inbound log, deduplication, crediting) runs as
 * it does for a provider. The payment's id is `sim-<intent id>`: sending one outcome twice is
 * a duplicate.
 */
export async function sendSimulatedCallback(
  em: EntityManager,
  box: SecretBox,
  callbackBase: string,
  intentId: string,
  input: SimulatedPayment,
): Promise<z.output<typeof SimulatedCallbackSchema>> {
  const intent = await em.findOne(DepositIntent, intentId, { populate: ['provider'] });
  if (!intent) throw errors.notFound('Deposit intent');
  const provider = intent.provider.getEntity() as Integration;
  if (provider.adapter !== 'simulator')
    throw errors.conflict('NOT_SIMULATED', "This intent's provider is not the simulator: its own provider calls back");
  const [secret] = await callbackSecrets(em, box, provider);
  const call = signedSimulatorCall(secret!, {
    external_id: `sim-${intent.id}`,
    intent_id: intent.id,
    status: input.outcome,
    amount: money(input.amount ?? intent.amount).toFixed(2),
    currency: intent.currency,
    instrument_fingerprint: `sim-card-${intent.customer.id.slice(0, 8)}`,
  });
  const res = await fetch(`${callbackBase}/api/integrations/payments/${provider.id}/callbacks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...call.headers },
    body: call.body,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // answered in text: passed on as it came
  }
  return { intent_id: intent.id, external_id: `sim-${intent.id}`, callback_status: res.status, callback_body: parsed };
}
