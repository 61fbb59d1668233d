import { Migration } from '@mikro-orm/migrations';

/**
 * Deposits through payment providers: the integrations registry (a provider is a row of kind
 * `psp`), the log of every call an integration makes to us, deposit intents, and the built-in
 * mails of a provider deposit completed or failed.
 */
export class Migration20261128093000_Payments extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "integrations" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "kind" varchar(16) not null, "adapter" varchar(32) not null, "name" varchar(100) not null, "enabled" boolean not null default true, "config" jsonb not null, "secret_sealed" text not null, "previous_secret_sealed" text null, "previous_secret_expires_at" timestamptz null, "last_inbound_at" timestamptz null, "last_error" varchar(500) null, constraint "integrations_pkey" primary key ("id"));`);
    this.addSql(`create index "integrations_kind_created_at_index" on "integrations" ("kind", "created_at");`);

    this.addSql(`create table "integration_inbound" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "integration_id" uuid not null, "source_ip" varchar(64) null, "signature_valid" boolean not null, "external_id" varchar(128) null, "dedupe_key" varchar(200) null, "outcome" varchar(16) not null, "error" varchar(500) null, "body" text null, constraint "integration_inbound_pkey" primary key ("id"));`);
    this.addSql(`create unique index "integration_inbound_dedupe" on "integration_inbound" ("integration_id", "dedupe_key") where "dedupe_key" is not null;`);
    this.addSql(`create index "integration_inbound_integration_id_created_at_index" on "integration_inbound" ("integration_id", "created_at");`);

    this.addSql(`create table "deposit_intents" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "provider_id" uuid not null, "customer_id" uuid not null, "account_id" uuid not null, "login" bigint not null, "amount" numeric(38,2) not null, "currency" varchar(3) not null, "status" varchar(16) not null default 'pending', "external_id" varchar(128) null, "redirect_url" varchar(2048) null, "expires_at" timestamptz not null, "review" jsonb null, "reason" varchar(500) null, "credited_amount" numeric(38,2) null, "credited_currency" varchar(3) null, "decided_at" timestamptz null, "decided_by" uuid null, "instrument_fingerprint" varchar(128) null, constraint "deposit_intents_pkey" primary key ("id"));`);
    this.addSql(`create index "deposit_intents_open_expiry" on "deposit_intents" ("expires_at") where "status" in ('pending', 'processing');`);
    this.addSql(`create index "deposit_intents_status_created_at_index" on "deposit_intents" ("status", "created_at");`);
    this.addSql(`create index "deposit_intents_customer_id_created_at_index" on "deposit_intents" ("customer_id", "created_at");`);

    this.addSql(`alter table "integration_inbound" add constraint "integration_inbound_integration_id_foreign" foreign key ("integration_id") references "integrations" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "deposit_intents" add constraint "deposit_intents_provider_id_foreign" foreign key ("provider_id") references "integrations" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "deposit_intents" add constraint "deposit_intents_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "deposit_intents" add constraint "deposit_intents_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete restrict;`);


    // The built-in mails of a deposit a provider completed or failed (domain/mail/templates.ts).
    this.addSql("insert into \"email_templates\" (\"id\", \"created_at\", \"updated_at\", \"key\", \"name\", \"default_locale\", \"translations\", \"built_in\") values (gen_random_uuid(), now(), now(), 'deposit_completed', 'Deposit received', 'en', '{\"en\":{\"subject\":\"Your deposit of {{amount}} {{currency}} has arrived\",\"text\":\"Hello {{first_name}},\\n\\nyour deposit of {{amount}} {{currency}} has arrived in your account {{login}}.\\n\",\"html\":\"<p>Hello {{first_name}},</p><p>your deposit of <strong>{{amount}} {{currency}}</strong> has arrived in your account {{login}}.</p>\"},\"de\":{\"subject\":\"Ihre Einzahlung über {{amount}} {{currency}} ist eingegangen\",\"text\":\"Hallo {{first_name}},\\n\\nIhre Einzahlung über {{amount}} {{currency}} ist auf Ihrem Konto {{login}} eingegangen.\\n\",\"html\":\"<p>Hallo {{first_name}},</p><p>Ihre Einzahlung über <strong>{{amount}} {{currency}}</strong> ist auf Ihrem Konto {{login}} eingegangen.</p>\"}}'::jsonb, true) on conflict (\"key\") do nothing;");
    this.addSql("insert into \"email_templates\" (\"id\", \"created_at\", \"updated_at\", \"key\", \"name\", \"default_locale\", \"translations\", \"built_in\") values (gen_random_uuid(), now(), now(), 'deposit_failed', 'Deposit failed', 'en', '{\"en\":{\"subject\":\"Your deposit of {{amount}} {{currency}} did not go through\",\"text\":\"Hello {{first_name}},\\n\\nyour deposit of {{amount}} {{currency}} into your account {{login}} did not go through: {{reason}}. Nothing was credited.\\n\",\"html\":\"<p>Hello {{first_name}},</p><p>your deposit of <strong>{{amount}} {{currency}}</strong> into your account {{login}} did not go through: {{reason}}.</p><p>Nothing was credited.</p>\"},\"de\":{\"subject\":\"Ihre Einzahlung über {{amount}} {{currency}} ist fehlgeschlagen\",\"text\":\"Hallo {{first_name}},\\n\\nIhre Einzahlung über {{amount}} {{currency}} auf Ihr Konto {{login}} ist fehlgeschlagen: {{reason}}. Es wurde nichts gutgeschrieben.\\n\",\"html\":\"<p>Hallo {{first_name}},</p><p>Ihre Einzahlung über <strong>{{amount}} {{currency}}</strong> auf Ihr Konto {{login}} ist fehlgeschlagen: {{reason}}.</p><p>Es wurde nichts gutgeschrieben.</p>\"}}'::jsonb, true) on conflict (\"key\") do nothing;");

  }

  override async down(): Promise<void> {
    this.addSql(`alter table "integration_inbound" drop constraint "integration_inbound_integration_id_foreign";`);

    this.addSql(`alter table "deposit_intents" drop constraint "deposit_intents_provider_id_foreign";`);

    this.addSql(`drop table if exists "integrations" cascade;`);

    this.addSql(`drop table if exists "integration_inbound" cascade;`);

    this.addSql(`drop table if exists "deposit_intents" cascade;`);


    this.addSql(`delete from "email_templates" where "key" in ('deposit_completed', 'deposit_failed');`);

  }

}
