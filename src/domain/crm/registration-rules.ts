import type { EntityManager } from '@mikro-orm/postgresql';
import { BrokerSettings, type RegistrationSettings } from '../../entities/broker-settings.entity';
import { AppError } from '../../platform/errors';

/** The registration settings as stored (defaults when the settings row is not written yet). */
export async function registrationSettings(em: EntityManager): Promise<RegistrationSettings> {
  const row = await em.findOne(BrokerSettings, 1, { refresh: true });
  return row?.registration ?? { blocked_countries: [], max_per_ip_per_hour: 5 };
}

/**
 * A sign-up or a lead from a country the broker refuses: a blocked one, or, when the broker
 * lists allowed countries, one not among them. A lead without a country passes. Existing
 * customers are never touched by a change of these lists.
 */
export function assertCountryAllowed(settings: RegistrationSettings, country: string | null | undefined): void {
  if (!country) return;
  const allowed = settings.allowed_countries;
  if (settings.blocked_countries.includes(country) || (allowed && allowed.length > 0 && !allowed.includes(country)))
    throw new AppError(403, 'COUNTRY_NOT_ALLOWED', 'Registrations from this country are not accepted');
}
