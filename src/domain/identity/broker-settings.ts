import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { BrokerSettings, type AssignmentSettings } from '../../entities/broker-settings.entity';
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

export const AssignmentSettingsSchema = z.object({
  strategy: z
    .enum(['none', 'round_robin', 'least_open_tasks'])
    .describe('How a member of the matched team is picked: none, in turn, or the one with the fewest open tasks'),
  default_manager_id: z.uuid().nullable().optional().describe('The manager when no team member is picked'),
  country_rules: z
    .array(
      z.object({
        countries: z
          .array(
            z
              .string()
              .regex(/^[A-Z]{2}$/)
              .meta({ examples: ['DE'] }),
          )
          .min(1)
          .max(300)
          .describe('ISO 3166-1 alpha-2'),
        team_id: z.uuid(),
      }),
    )
    .max(300)
    .describe("The first rule naming the new customer's country gives its team"),
});

export const SettingsSchema = z.object({
  access_token_ttl_seconds: z.int(),
  broker_name: z.string().describe("The broker's name as reports and statements show it in their titles"),
  rollover_time: z.string().describe('When the end of day runs, HH:MM in UTC'),
  triple_swap_day: z.string().describe('The weekday (monday to friday) whose rollover books three nights of swap'),
  assignment: AssignmentSettingsSchema.describe('How new customers are assigned to a team and an account manager'),
  updated_at: z.iso.datetime(),
});
export type SettingsView = z.output<typeof SettingsSchema>;

export function settingsView(settings: BrokerSettings): SettingsView {
  return {
    access_token_ttl_seconds: settings.accessTokenTtlSeconds,
    broker_name: settings.brokerName,
    rollover_time: settings.rolloverTime,
    triple_swap_day: settings.tripleSwapDay,
    assignment: {
      strategy: settings.assignment.strategy,
      default_manager_id: settings.assignment.default_manager_id ?? null,
      country_rules: settings.assignment.country_rules,
    },
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
    assignment?: AssignmentSettings | undefined;
  },
): Promise<SettingsView> {
  const settings = await loadBrokerSettings(em, defaultAccessTokenTtl);
  const before = settingsView(settings);
  if (input.access_token_ttl_seconds !== undefined) settings.accessTokenTtlSeconds = input.access_token_ttl_seconds;
  if (input.broker_name !== undefined) settings.brokerName = input.broker_name;
  if (input.rollover_time !== undefined) settings.rolloverTime = input.rollover_time;
  if (input.triple_swap_day !== undefined) settings.tripleSwapDay = input.triple_swap_day;
  if (input.assignment !== undefined) settings.assignment = { ...input.assignment };
  settings.updatedAt = new Date();
  const after = settingsView(settings);
  recordAudit(em, actor, { action: 'settings.updated', entityType: 'broker_settings', entityId: '1', before, after });
  await em.flush();
  return after;
}
