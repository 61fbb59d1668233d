import { Migration } from '@mikro-orm/migrations';

/**
 * Notifications of a risk rule's `notify` action were written with the whole event's data,
 * so a customer could read its risk class and the rule's name at GET
 * /customers/me/notifications. New ones keep only the login (the type's projection in
 * notifications.ts); this cuts the ones already written down to the same.
 */
export class Migration20261124090000_NotificationRiskData extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `update "notifications" set "data" = jsonb_build_object('login', "data"->'login'), "updated_at" = now() where "type" = 'account.risk_classified' and "data" - 'login' <> '{}'::jsonb;`,
    );
  }

  override async down(): Promise<void> {
    // Nothing to restore: the removed fields are still in domain_events for staff.
  }
}
