import { Migration } from '@mikro-orm/migrations';

/**
 * Prop challenges (decisions, section 17): programs with their phases, and one challenge row per
 * stage on its own prop account; a funded account's payouts keep the program's profit split.
 */
export class Migration20261127080000_PropChallenges extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "prop_programs" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "name" varchar(100) not null, "currency" varchar(3) not null, "initial_balance" numeric(38,2) not null, "group_id" uuid not null, "profit_split_pct" numeric(5,2) not null, "phases" jsonb not null, constraint "prop_programs_pkey" primary key ("id"));`);

    this.addSql(`create table "prop_challenges" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "program_id" uuid not null, "customer_id" uuid not null, "account_id" uuid not null, "login" bigint not null, "phase" int not null, "status" text check ("status" in ('active', 'passed', 'failed', 'funded')) not null default 'active', "initial_balance" numeric(38,2) not null, "profit_target_pct" numeric(7,2) not null, "max_daily_loss_pct" numeric(5,2) not null, "max_total_loss_pct" numeric(5,2) not null, "total_loss_mode" varchar(8) not null, "min_trading_days" int not null, "max_trading_days" int null, "ends_at" timestamptz null, "day_start_equity" numeric(38,2) not null, "day_start_date" date not null, "high_water_mark" numeric(38,2) not null, "failure" jsonb null, "decided_at" timestamptz null, "closed_out_at" timestamptz null, "previous_id" uuid null, constraint "prop_challenges_pkey" primary key ("id"));`);
    this.addSql(`alter table "prop_challenges" add constraint "prop_challenges_account_id_unique" unique ("account_id");`);
    this.addSql(`alter table "prop_challenges" add constraint "prop_challenges_previous_id_unique" unique ("previous_id");`);
    this.addSql(`create index "prop_challenges_customer_id_created_at_index" on "prop_challenges" ("customer_id", "created_at");`);
    this.addSql(`create index "prop_challenges_active_account" on "prop_challenges" ("account_id") where "status" = 'active';`);

    this.addSql(`alter table "prop_programs" add constraint "prop_programs_group_id_foreign" foreign key ("group_id") references "trading_groups" ("id") on update cascade on delete restrict;`);

    this.addSql(`alter table "prop_challenges" add constraint "prop_challenges_program_id_foreign" foreign key ("program_id") references "prop_programs" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "prop_challenges" add constraint "prop_challenges_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "prop_challenges" add constraint "prop_challenges_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "prop_challenges" add constraint "prop_challenges_previous_id_foreign" foreign key ("previous_id") references "prop_challenges" ("id") on update cascade on delete restrict;`);

    this.addSql(`alter table "payouts" add column "profit_split_pct" numeric(5,2) null;`);
    // The built-in mails of a failed and a passed stage (domain/mail/templates.ts).
    this.addSql("insert into \"email_templates\" (\"id\", \"created_at\", \"updated_at\", \"key\", \"name\", \"default_locale\", \"translations\", \"built_in\") values (gen_random_uuid(), now(), now(), 'prop_challenge_failed', 'Prop challenge failed', 'en', '{\"en\":{\"subject\":\"Your challenge on account {{login}} has ended\",\"text\":\"Hello {{first_name}},\\n\\nphase {{phase}} of your challenge on account {{login}} has failed: rule {{rule}} (threshold {{threshold}}, equity {{equity}}). Its positions are closed and the account no longer trades.\\n\",\"html\":\"<p>Hello {{first_name}},</p><p>phase {{phase}} of your challenge on account {{login}} has failed: rule <strong>{{rule}}</strong> (threshold {{threshold}}, equity {{equity}}).</p><p>Its positions are closed and the account no longer trades.</p>\"},\"de\":{\"subject\":\"Ihre Challenge auf Konto {{login}} ist beendet\",\"text\":\"Hallo {{first_name}},\\n\\nPhase {{phase}} Ihrer Challenge auf Konto {{login}} ist nicht bestanden: Regel {{rule}} (Schwelle {{threshold}}, Equity {{equity}}). Die Positionen sind geschlossen, das Konto handelt nicht mehr.\\n\",\"html\":\"<p>Hallo {{first_name}},</p><p>Phase {{phase}} Ihrer Challenge auf Konto {{login}} ist nicht bestanden: Regel <strong>{{rule}}</strong> (Schwelle {{threshold}}, Equity {{equity}}).</p><p>Die Positionen sind geschlossen, das Konto handelt nicht mehr.</p>\"}}'::jsonb, true) on conflict (\"key\") do nothing;");
    this.addSql("insert into \"email_templates\" (\"id\", \"created_at\", \"updated_at\", \"key\", \"name\", \"default_locale\", \"translations\", \"built_in\") values (gen_random_uuid(), now(), now(), 'prop_challenge_passed', 'Prop challenge passed', 'en', '{\"en\":{\"subject\":\"You passed phase {{phase}} on account {{login}}\",\"text\":\"Hello {{first_name}},\\n\\ncongratulations: you passed phase {{phase}} of your challenge on account {{login}}. Your next stage trades on account {{next_login}}.\\n\",\"html\":\"<p>Hello {{first_name}},</p><p>congratulations: you passed phase {{phase}} of your challenge on account {{login}}.</p><p>Your next stage trades on account <strong>{{next_login}}</strong>.</p>\"},\"de\":{\"subject\":\"Phase {{phase}} auf Konto {{login}} bestanden\",\"text\":\"Hallo {{first_name}},\\n\\nherzlichen Glückwunsch: Sie haben Phase {{phase}} Ihrer Challenge auf Konto {{login}} bestanden. Ihre nächste Stufe handelt auf Konto {{next_login}}.\\n\",\"html\":\"<p>Hallo {{first_name}},</p><p>herzlichen Glückwunsch: Sie haben Phase {{phase}} Ihrer Challenge auf Konto {{login}} bestanden.</p><p>Ihre nächste Stufe handelt auf Konto <strong>{{next_login}}</strong>.</p>\"}}'::jsonb, true) on conflict (\"key\") do nothing;");

  }

  override async down(): Promise<void> {
    this.addSql(`alter table "prop_challenges" drop constraint "prop_challenges_program_id_foreign";`);

    this.addSql(`alter table "prop_challenges" drop constraint "prop_challenges_previous_id_foreign";`);

    this.addSql(`drop table if exists "prop_programs" cascade;`);

    this.addSql(`drop table if exists "prop_challenges" cascade;`);

    this.addSql(`alter table "payouts" drop column "profit_split_pct";`);
    this.addSql(`delete from "email_templates" where "key" in ('prop_challenge_failed', 'prop_challenge_passed');`);

  }

}
