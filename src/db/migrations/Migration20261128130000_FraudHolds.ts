import { Migration } from '@mikro-orm/migrations';

/**
 * Fraud holds on sign-ups, promo redemptions and bonuses, pending bonuses, the stamp the
 * per-process copy of the fraud rules is checked against, and the built-in rule on staff
 * changes of a verification level (shipped disabled, as the other built-ins).
 */
export class Migration20261128130000_FraudHolds extends Migration {
  override name = 'Migration20261128130000_FraudHolds';

  override up(): void | Promise<void> {
    this.addSql(`create table "fraud_rules_stamp" ("id" int not null, "stamp" uuid not null, "changed_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`insert into "fraud_rules_stamp" ("id", "stamp", "changed_at") values (1, gen_random_uuid(), now());`);

    this.addSql(`alter table "bonuses" alter column "account_id" drop not null;`);
    this.addSql(`alter table "bonuses" alter column "login" drop not null;`);
    this.addSql(`alter table "bonuses" add "hold_to" varchar(16) null;`);
    this.addSql(`create index "bonuses_customer_id_status_index" on "bonuses" ("customer_id", "status");`);

    this.addSql(`alter table "pending_registrations" add "fraud_evaluation_id" uuid null;`);

    this.addSql(`insert into "fraud_rules" ("id", "created_at", "updated_at", "name", "event", "match", "conditions", "action", "position", "enabled", "version", "builtin_key") values
      (gen_random_uuid(), now(), now(), 'Verification level changed by staff outside the exceptions list', 'verification_change', 'all', '[{"field": "staff.excepted", "op": "eq", "value": false}]', 'review', 1003, false, 1, 'verification_override');`);
  }

  override down(): void | Promise<void> {
    this.addSql(`delete from "fraud_rules" where "builtin_key" = 'verification_override';`);
    this.addSql(`alter table "pending_registrations" drop column "fraud_evaluation_id";`);
    this.addSql(`drop index "bonuses_customer_id_status_index";`);
    this.addSql(`alter table "bonuses" drop column "hold_to";`);
    this.addSql(`drop table if exists "fraud_rules_stamp";`);
  }
}
