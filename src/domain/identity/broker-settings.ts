import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { BrokerSettings, type MaintenanceSettings, type RegistrationSettings } from '../../entities/broker-settings.entity';
import { Customer } from '../../entities/customer.entity';
import { recordEvent } from '../events/outbox';
import { forgetMaintenance } from './maintenance';
import { recordAudit } from '../audit/audit';
import type { StaffCaller } from '../../platform/caller';
import { executeNamed } from '../../db/bound-statement';
import { INSERT_DEFAULT_SETTINGS } from './identity.queries';

/** The settings row (id 1), created on first read with the defaults. */
export async function loadBrokerSettings(em: EntityManager, defaultAccessTokenTtl: number): Promise<BrokerSettings> {
  const found = await em.findOne(BrokerSettings, 1);
  if (found) return found;
  await executeNamed(em, INSERT_DEFAULT_SETTINGS.bind({ access_token_ttl_seconds: defaultAccessTokenTtl }));
  return em.findOneOrFail(BrokerSettings, 1);
}

const CountryList = z
  .array(
    z
      .string()
      .regex(/^[A-Z]{2}$/, { message: 'An ISO 3166-1 alpha-2 code, such as DE' })
      .meta({ examples: ['KP'] }),
  )
  .max(300);

export const RegistrationSettingsSchema = z.object({
  blocked_countries: CountryList.describe('Sign-ups and leads from these countries are 403 COUNTRY_NOT_ALLOWED'),
  allowed_countries: CountryList.nullable()
    .optional()
    .describe('When not empty, only these countries may sign up (blocked ones still may not); null or empty: every country'),
  max_per_ip_per_hour: z
    .int()
    .min(1)
    .max(10_000)
    .meta({ examples: [5] })
    .describe('Sign-up attempts one client address may make in an hour (default 5)'),
});

export const MaintenanceSettingsSchema = z.object({
  enabled: z.boolean(),
  message: z.string().max(1000).describe('Shown to customers in the 503 answer'),
  until: z.iso.datetime().nullable().optional().describe('When it is expected to end: the Retry-After of the 503 answers'),
});

export const SettingsSchema = z.object({
  access_token_ttl_seconds: z.int(),
  broker_name: z.string().describe("The broker's name as reports and statements show it in their titles"),
  rollover_time: z.string().describe('When the end of day runs, HH:MM in UTC'),
  triple_swap_day: z.string().describe('The weekday (monday to friday) whose rollover books three nights of swap'),
  registration: RegistrationSettingsSchema,
  maintenance: MaintenanceSettingsSchema.describe(
    'While enabled, customer routes answer 503 MAINTENANCE, except GET of their own data, logins and streams',
  ),
  dormant_after_days: z
    .int()
    .meta({ examples: [90] })
    .describe('Days without a closed trade after which the end of day makes an active customer dormant'),
  support_first_response_minutes: z
    .int()
    .meta({ examples: [240] })
    .describe('How soon a support conversation is due its first staff answer'),
  updated_at: z.iso.datetime(),
  affected_customers: z
    .int()
    .optional()
    .describe('In the answer to a PATCH that sets blocked_countries: existing customers in those countries (left as they are)'),
});
export type SettingsView = z.output<typeof SettingsSchema>;

export function settingsView(settings: BrokerSettings): SettingsView {
  return {
    access_token_ttl_seconds: settings.accessTokenTtlSeconds,
    broker_name: settings.brokerName,
    rollover_time: settings.rolloverTime,
    triple_swap_day: settings.tripleSwapDay,
    registration: {
      blocked_countries: settings.registration.blocked_countries,
      allowed_countries: settings.registration.allowed_countries ?? null,
      max_per_ip_per_hour: settings.registration.max_per_ip_per_hour,
    },
    maintenance: {
      enabled: settings.maintenance.enabled,
      message: settings.maintenance.message,
      until: settings.maintenance.until ?? null,
    },
    dormant_after_days: settings.dormantAfterDays,
    support_first_response_minutes: settings.supportFirstResponseMinutes,
    updated_at: settings.updatedAt.toISOString(),
  };
}

/** Changes the fields sent, audited with the settings before and after. */
export async function updateBrokerSettings(
  em: EntityManager,
  defaultAccessTokenTtl: number,
  actor: StaffCaller,
  input: {
    access_token_ttl_seconds?: number | undefined;
    broker_name?: string | undefined;
    rollover_time?: string | undefined;
    triple_swap_day?: string | undefined;
    registration?: Partial<z.output<typeof RegistrationSettingsSchema>> | undefined;
    maintenance?: Partial<z.output<typeof MaintenanceSettingsSchema>> | undefined;
    dormant_after_days?: number | undefined;
    support_first_response_minutes?: number | undefined;
  },
): Promise<SettingsView> {
  const settings = await loadBrokerSettings(em, defaultAccessTokenTtl);
  const before = settingsView(settings);
  if (input.access_token_ttl_seconds !== undefined) settings.accessTokenTtlSeconds = input.access_token_ttl_seconds;
  if (input.broker_name !== undefined) settings.brokerName = input.broker_name;
  if (input.rollover_time !== undefined) settings.rolloverTime = input.rollover_time;
  if (input.triple_swap_day !== undefined) settings.tripleSwapDay = input.triple_swap_day;
  if (input.registration !== undefined) {
    const merged: RegistrationSettings = { ...settings.registration };
    if (input.registration.blocked_countries !== undefined)
      merged.blocked_countries = [...new Set(input.registration.blocked_countries)];
    if (input.registration.allowed_countries !== undefined) merged.allowed_countries = input.registration.allowed_countries;
    if (input.registration.max_per_ip_per_hour !== undefined) merged.max_per_ip_per_hour = input.registration.max_per_ip_per_hour;
    settings.registration = merged;
  }
  if (input.maintenance !== undefined) {
    const merged: MaintenanceSettings = { ...settings.maintenance };
    if (input.maintenance.enabled !== undefined) merged.enabled = input.maintenance.enabled;
    if (input.maintenance.message !== undefined) merged.message = input.maintenance.message;
    if (input.maintenance.until !== undefined) merged.until = input.maintenance.until;
    settings.maintenance = merged;
  }
  if (input.dormant_after_days !== undefined) settings.dormantAfterDays = input.dormant_after_days;
  if (input.support_first_response_minutes !== undefined)
    settings.supportFirstResponseMinutes = input.support_first_response_minutes;
  settings.updatedAt = new Date();
  const after = settingsView(settings);
  recordAudit(em, actor, { action: 'settings.updated', entityType: 'broker_settings', entityId: '1', before, after });
  recordEvent(em, { type: 'settings.updated', aggregateType: 'broker_settings', aggregateId: '1', data: { before, after } });
  await em.flush();
  forgetMaintenance();
  const blocked = input.registration?.blocked_countries;
  if (blocked === undefined) return after;
  // For information only: blocking a country never touches the customers already there.
  const affected = blocked.length ? await em.count(Customer, { country: { $in: blocked } }) : 0;
  return { ...after, affected_customers: affected };
}
