import { z } from 'zod';

/**
 * Every permission a role or an API token scope can hold: snake_case
 * verb_object names. A staff route declares the one it needs.
 */
export const PERMISSIONS = [
  'view_groups',
  'manage_groups',
  'open_position',
  'modify_orders',
  'close_position',
  'view_orders',
  'manage_payouts',
  'preview_risk_rules',
  'manage_email_templates',
  'manage_webhooks',
  'view_customers',
  'manage_customers',
  'manage_accounts',
  'approve_withdrawals',
  'manage_api_tokens',
  'manage_users',
  'manage_settings',
  'view_audit',
  'view_queues',
  'manage_queues',
  'manage_risk_rules',
  'manage_simulator',
  'manage_compliance',
  'view_events',
  'view_reports',
  'run_end_of_day',
  'manage_prop',
  'manage_bonuses',
  'manage_promotions',
  'manage_payments',
  'approve_deposits',
  'manage_integrations',
  'assign_customers',
  'view_customer_pii',
  'manage_tasks',
  'review_fraud_cases',
  'manage_fraud_rules',
  'moderate_customers',
  'view_conversations',
  'reply_conversations',
  'manage_partners',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export const PermissionSchema = z.enum(PERMISSIONS);

/** The built-in role the bootstrap admin gets: every permission, kept complete at start-up. */
export const ADMIN_ROLE = 'admin';
