import { Migration } from '@mikro-orm/migrations';

export class Migration20261128110200_Fraud extends Migration {

  override name = 'Migration20261128110200_Fraud';

  override up(): void | Promise<void> {
    this.addSql(`create table "fraud_cases" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "customer_id" uuid not null, "status" varchar(14) not null default 'open', "assignee_id" uuid null, "reasons" jsonb not null, "verdict" varchar(10) null, "actions" jsonb null, "note" varchar(2000) null, "resolved_at" timestamptz null, "resolved_by" uuid null, primary key ("id"));`);
    this.addSql(`create index "fraud_cases_customer_id_status_index" on "fraud_cases" ("customer_id", "status");`);
    this.addSql(`create index "fraud_cases_status_created_at_index" on "fraud_cases" ("status", "created_at");`);

    this.addSql(`create table "fraud_evaluations" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "event" varchar(20) not null, "customer_id" uuid null, "decision" varchar(6) not null, "decided_by" varchar(40) not null, "rule_id" uuid null, "rule_version" int null, "signals" jsonb not null, "fields" jsonb not null, "reference_type" varchar(40) null, "reference_id" varchar(64) null, primary key ("id"));`);
    this.addSql(`create index "fraud_evaluations_reference_id_index" on "fraud_evaluations" ("reference_id");`);
    this.addSql(`create index "fraud_evaluations_event_created_at_index" on "fraud_evaluations" ("event", "created_at");`);

    this.addSql(`create table "fraud_lists" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "name" varchar(40) not null, "items" jsonb not null, primary key ("id"));`);
    this.addSql(`alter table "fraud_lists" add constraint "fraud_lists_name_unique" unique ("name");`);

    this.addSql(`create table "fraud_rules" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "name" varchar(100) not null, "event" varchar(20) not null, "match" varchar(3) not null, "conditions" jsonb not null, "action" varchar(6) not null, "position" int not null, "enabled" boolean not null default false, "version" int not null default 1, "builtin_key" varchar(60) null, primary key ("id"));`);
    this.addSql(`alter table "fraud_rules" add constraint "fraud_rules_builtin_key_unique" unique ("builtin_key");`);
    this.addSql(`create index "fraud_rules_event_position_index" on "fraud_rules" ("event", "position");`);

    this.addSql(`create table "fraud_signals" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "customer_id" uuid not null, "event" varchar(20) not null, "device_id" varchar(128) null, "ip" varchar(45) null, "instrument" varchar(128) null, "destination" varchar(64) null, primary key ("id"));`);
    this.addSql(`create index "fraud_signals_customer_id_created_at_index" on "fraud_signals" ("customer_id", "created_at");`);
    this.addSql(`create index "fraud_signals_destination_index" on "fraud_signals" ("destination");`);
    this.addSql(`create index "fraud_signals_instrument_index" on "fraud_signals" ("instrument");`);
    this.addSql(`create index "fraud_signals_ip_created_at_index" on "fraud_signals" ("ip", "created_at");`);
    this.addSql(`create index "fraud_signals_device_id_created_at_index" on "fraud_signals" ("device_id", "created_at");`);

    this.addSql(`alter table "customers" add "access" text not null default 'full';`);
    this.addSql(`alter table "customers" add constraint "customers_access_check" check ("access" in ('full', 'close_only', 'no_login'));`);

    this.addSql(`alter table "withdrawals" add "review_reason" varchar(200) null;`);

    // The built-in rules, shipped disabled: staff enable (and may edit) them.
    this.addSql(`insert into "fraud_rules" ("id", "created_at", "updated_at", "name", "event", "match", "conditions", "action", "position", "enabled", "version", "builtin_key") values
      (gen_random_uuid(), now(), now(), 'One device on 3 or more customers', 'login', 'all', '[{"field": "device.linked_customers", "op": "gte", "value": 2}]', 'review', 1000, false, 1, 'device_shared'),
      (gen_random_uuid(), now(), now(), 'One device on 3 or more customers (withdrawal)', 'withdrawal', 'all', '[{"field": "device.linked_customers", "op": "gte", "value": 2}]', 'review', 1000, false, 1, 'device_shared_withdrawal'),
      (gen_random_uuid(), now(), now(), 'Withdrawal with no trade since the last deposit', 'withdrawal', 'all', '[{"field": "trades_since_last_deposit", "op": "eq", "value": 0}]', 'review', 1001, false, 1, 'withdrawal_without_trading'),
      (gen_random_uuid(), now(), now(), 'Withdrawal destination used by another customer', 'withdrawal', 'all', '[{"field": "withdrawal.destination_customers", "op": "gte", "value": 1}]', 'review', 1002, false, 1, 'shared_destination');`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "fraud_cases" cascade;`);
    this.addSql(`drop table if exists "fraud_evaluations" cascade;`);
    this.addSql(`drop table if exists "fraud_lists" cascade;`);
    this.addSql(`drop table if exists "fraud_rules" cascade;`);
    this.addSql(`drop table if exists "fraud_signals" cascade;`);

    this.addSql(`alter table "customers" drop constraint "customers_access_check";`);
    this.addSql(`alter table "customers" drop column "access";`);

    this.addSql(`alter table "withdrawals" drop column "review_reason";`);

  }

}
