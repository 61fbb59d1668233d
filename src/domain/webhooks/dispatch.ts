import type { EntityManager } from '@mikro-orm/postgresql';
import { executeNamed } from '../../db/bound-statement';
import { WEBHOOKS_DUE } from './webhooks.queries';

/**
 * Webhooks with an attempt due that nobody holds: an open delivery whose time has come and
 * whose lease (if any) has lapsed, or events past the cursor and no open delivery. What the
 * schedule re-kicks: retries, work whose kick was lost, and deliveries a killed worker left.
 * (Newly published events are kicked by the relay as it publishes them: consumer.ts.)
 */
export async function webhooksDue(em: EntityManager, limit = 1000): Promise<string[]> {
  const rows = await executeNamed<{ id: string }>(em, WEBHOOKS_DUE.bind({ limit }));
  return rows.map((r) => r.id);
}
