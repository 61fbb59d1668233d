import { Migration } from '@mikro-orm/migrations';

/**
 * The customer lifecycle and the CRM records around it: each customer's system stage (existing
 * customers take the stage their history gives them), the first deposit,
 * the sales status, the lead and sign-up details; pending self-registrations; staff notes;
 * the broker's sales statuses; the registration, maintenance, dormancy and support settings;
 * and the mails of sign-up and of a lead's invitation, in English and German.
 */
export class Migration20261128110000_CustomerLifecycle extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "customers"
      add column "lifecycle" varchar(16) not null default 'registered',
      add column "ftd_at" timestamptz null,
      add column "ftd_amount" numeric(38,2) null,
      add column "sales_status" varchar(64) null,
      add column "phone" varchar(32) null,
      add column "lead_source" varchar(255) null,
      add column "lead_campaign" varchar(255) null,
      add column "partner_code" varchar(255) null,
      add column "promo_code" varchar(64) null,
      add column "signup_device_id" varchar(200) null,
      add column "closed_at" timestamptz null,
      add column "close_reason" varchar(1000) null;`);
    // Existing customers take the stage their history gives them, so a later deposit is not
    // taken for a first one: the first deposit, then a verification, then a close in 30 days.
    this.addSql(`update "customers" c set "ftd_at" = d."created_at", "ftd_amount" = d."amount", "lifecycle" = 'funded'
      from (select distinct on (a."customer_id") a."customer_id", l."created_at", l."amount"
              from "ledger_entries" l join "accounts" a on a."id" = l."account_id"
             where l."kind" = 'deposit' order by a."customer_id", l."seq") d
     where d."customer_id" = c."id";`);
    this.addSql(`update "customers" set "lifecycle" = 'verified' where "lifecycle" = 'registered' and "verification_level" > 0;`);
    this.addSql(`update "customers" c set "lifecycle" = 'active' where exists (
      select 1 from "orders" o join "accounts" a on a."id" = o."account_id"
       where a."customer_id" = c."id" and o."status" = 'closed' and o."closed_at" > now() - interval '30 days');`);
    this.addSql(`create table "pending_registrations" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "email" varchar(320) not null, "password_hash" varchar(255) not null, "first_name" varchar(100) not null, "last_name" varchar(100) not null, "country" varchar(2) not null, "locale" varchar(16) not null, "phone" varchar(32) null, "partner_code" varchar(255) null, "promo_code" varchar(64) null, "device_id" varchar(200) null, "client_ip" varchar(64) null, "token_hash" varchar(64) not null, "expires_at" timestamptz not null, "used_at" timestamptz null, "customer_id" uuid null, constraint "pending_registrations_pkey" primary key ("id"));`);
    this.addSql(`alter table "pending_registrations" add constraint "pending_registrations_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "pending_registrations_email_index" on "pending_registrations" ("email");`);
    this.addSql(`create table "customer_notes" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "customer_id" uuid not null, "author_id" uuid not null, "body" text not null, "pinned" boolean not null default false, "deleted_at" timestamptz null, "deleted_by" uuid null, constraint "customer_notes_pkey" primary key ("id"));`);
    this.addSql(`create index "customer_notes_customer_id_created_at_index" on "customer_notes" ("customer_id", "created_at");`);
    this.addSql(`create table "sales_statuses" ("key" varchar(64) not null, "name" varchar(100) not null, "position" int not null, "is_final" boolean not null, "updated_at" timestamptz not null, constraint "sales_statuses_pkey" primary key ("key"));`);
    this.addSql(`alter table "broker_settings"
      add column "registration" jsonb not null default '{"blocked_countries":[],"max_per_ip_per_hour":5}',
      add column "maintenance" jsonb not null default '{"enabled":false,"message":""}',
      add column "dormant_after_days" int not null default 90,
      add column "support_first_response_minutes" int not null default 240;`);
    this.addSql("insert into \"email_templates\" (\"id\", \"created_at\", \"updated_at\", \"key\", \"name\", \"default_locale\", \"translations\", \"built_in\") values (gen_random_uuid(), now(), now(), 'registration_confirm', 'Confirm your registration', 'en', '{\"en\":{\"subject\":\"Confirm your registration\",\"text\":\"Hello {{first_name}},\\n\\nthank you for signing up. To open your account, open this link within {{valid_hours}} hours:\\n\\n{{confirm_url}}\\n\\nIf it was not you, ignore this mail: no account is opened.\\n\",\"html\":\"<p>Hello {{first_name}},</p><p>thank you for signing up. To open your account, open this link within {{valid_hours}} hours:</p><p><a href=\\\"{{confirm_url}}\\\">Confirm my registration</a></p><p>If it was not you, ignore this mail: no account is opened.</p>\"},\"de\":{\"subject\":\"Bestätigen Sie Ihre Registrierung\",\"text\":\"Hallo {{first_name}},\\n\\ndanke für Ihre Anmeldung. Öffnen Sie innerhalb von {{valid_hours}} Stunden diesen Link, um Ihr Konto zu eröffnen:\\n\\n{{confirm_url}}\\n\\nWaren Sie es nicht, ignorieren Sie diese Mail: es wird kein Konto eröffnet.\\n\",\"html\":\"<p>Hallo {{first_name}},</p><p>danke für Ihre Anmeldung. Öffnen Sie innerhalb von {{valid_hours}} Stunden diesen Link, um Ihr Konto zu eröffnen:</p><p><a href=\\\"{{confirm_url}}\\\">Registrierung bestätigen</a></p><p>Waren Sie es nicht, ignorieren Sie diese Mail: es wird kein Konto eröffnet.</p>\"}}'::jsonb, true) on conflict (\"key\") do nothing;");
    this.addSql("insert into \"email_templates\" (\"id\", \"created_at\", \"updated_at\", \"key\", \"name\", \"default_locale\", \"translations\", \"built_in\") values (gen_random_uuid(), now(), now(), 'registration_attempt', 'Someone tried to register with your email', 'en', '{\"en\":{\"subject\":\"Someone tried to register with your email\",\"text\":\"Hello {{first_name}},\\n\\nsomeone tried to open a new account with your email. You already have an account: log in as usual, or reset your password if you forgot it. If it was not you, no action is needed.\\n\",\"html\":\"<p>Hello {{first_name}},</p><p>someone tried to open a new account with your email. You already have an account: log in as usual, or reset your password if you forgot it.</p><p>If it was not you, no action is needed.</p>\"},\"de\":{\"subject\":\"Jemand wollte sich mit Ihrer E-Mail-Adresse registrieren\",\"text\":\"Hallo {{first_name}},\\n\\njemand wollte mit Ihrer E-Mail-Adresse ein neues Konto eröffnen. Sie haben bereits ein Konto: melden Sie sich wie gewohnt an oder setzen Sie Ihr Passwort zurück. Waren Sie es nicht, ist nichts zu tun.\\n\",\"html\":\"<p>Hallo {{first_name}},</p><p>jemand wollte mit Ihrer E-Mail-Adresse ein neues Konto eröffnen. Sie haben bereits ein Konto: melden Sie sich wie gewohnt an oder setzen Sie Ihr Passwort zurück.</p><p>Waren Sie es nicht, ist nichts zu tun.</p>\"}}'::jsonb, true) on conflict (\"key\") do nothing;");
    this.addSql("insert into \"email_templates\" (\"id\", \"created_at\", \"updated_at\", \"key\", \"name\", \"default_locale\", \"translations\", \"built_in\") values (gen_random_uuid(), now(), now(), 'lead_invite', 'Invitation to choose a password', 'en', '{\"en\":{\"subject\":\"Your account is ready: choose a password\",\"text\":\"Hello {{first_name}},\\n\\nan account is ready for you. To choose your password, open this link within {{valid_minutes}} minutes:\\n\\n{{reset_url}}\\n\",\"html\":\"<p>Hello {{first_name}},</p><p>an account is ready for you. To choose your password, open this link within {{valid_minutes}} minutes:</p><p><a href=\\\"{{reset_url}}\\\">Choose my password</a></p>\"},\"de\":{\"subject\":\"Ihr Konto ist bereit: wählen Sie ein Passwort\",\"text\":\"Hallo {{first_name}},\\n\\nein Konto ist für Sie bereit. Öffnen Sie innerhalb von {{valid_minutes}} Minuten diesen Link, um Ihr Passwort zu wählen:\\n\\n{{reset_url}}\\n\",\"html\":\"<p>Hallo {{first_name}},</p><p>ein Konto ist für Sie bereit. Öffnen Sie innerhalb von {{valid_minutes}} Minuten diesen Link, um Ihr Passwort zu wählen:</p><p><a href=\\\"{{reset_url}}\\\">Passwort wählen</a></p>\"}}'::jsonb, true) on conflict (\"key\") do nothing;");
  }

  override async down(): Promise<void> {
    this.addSql(`delete from "email_templates" where "key" in ('registration_confirm', 'registration_attempt', 'lead_invite');`);
    this.addSql(`alter table "broker_settings" drop column "registration", drop column "maintenance", drop column "dormant_after_days", drop column "support_first_response_minutes";`);
    this.addSql(`drop table if exists "sales_statuses";`);
    this.addSql(`drop table if exists "customer_notes";`);
    this.addSql(`drop table if exists "pending_registrations";`);
    this.addSql(`alter table "customers" drop column "lifecycle", drop column "ftd_at", drop column "ftd_amount", drop column "sales_status", drop column "phone", drop column "lead_source", drop column "lead_campaign", drop column "partner_code", drop column "promo_code", drop column "signup_device_id", drop column "closed_at", drop column "close_reason";`);
  }
}
