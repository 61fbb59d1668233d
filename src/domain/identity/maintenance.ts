import type { EntityManager } from '@mikro-orm/postgresql';
import { BrokerSettings, type MaintenanceSettings } from '../../entities/broker-settings.entity';
import { AppError } from '../../platform/errors';
import { TtlCache } from '../../platform/ttl-cache';

/**
 * The maintenance switch as requests read it: from the settings row, at most once a second
 * per process (a change reaches every process within that second; this process at once).
 */
const cache = new TtlCache<MaintenanceSettings>(1000);

export function forgetMaintenance(): void {
  cache.clear();
}

export function maintenanceState(em: () => EntityManager): Promise<MaintenanceSettings> {
  return cache.get('maintenance', async () => {
    const row = await em().fork().findOne(BrokerSettings, 1);
    return row?.maintenance ?? { enabled: false, message: '' };
  });
}

/** When no end is given, a client is told to come back after this long. */
const DEFAULT_RETRY_SECONDS = 300;

/** The answer to a customer's request while maintenance is on: 503 MAINTENANCE, with Retry-After. */
export function maintenanceError(state: MaintenanceSettings, now = Date.now()): AppError {
  const until = state.until ? Date.parse(state.until) : NaN;
  const wait = Number.isFinite(until) && until > now ? Math.ceil((until - now) / 1000) : DEFAULT_RETRY_SECONDS;
  return new AppError(503, 'MAINTENANCE', state.message || 'The service is under maintenance; try again later', {
    'Retry-After': String(wait),
  });
}
