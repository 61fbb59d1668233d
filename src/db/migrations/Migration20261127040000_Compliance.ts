import { Migration } from '@mikro-orm/migrations';

/**
 * Compliance (decisions, section 16): customers get a verification level (0, as every customer
 * is today); the four levels start as today's behaviour (trade and withdraw, no limits, no
 * documents required), so nothing changes until a broker sets them. Documents keep their
 * metadata in `customer_documents` and their sealed bytes in `customer_document_files`, in
 * Postgres so that every API process reaches them. The built-in mails of decisions and of a
 * reached level, in English and German.
 */
export class Migration20261127040000_Compliance extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "customer_documents" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "customer_id" uuid not null, "type" text check ("type" in ('identity', 'address', 'selfie', 'payment_method')) not null, "status" text check ("status" in ('pending', 'approved', 'rejected')) not null default 'pending', "file_name" varchar(255) not null, "content_type" text check ("content_type" in ('application/pdf', 'image/jpeg', 'image/png')) not null, "size" int not null, "reason" varchar(500) null, "decided_at" timestamptz null, "decided_by" uuid null, constraint "customer_documents_pkey" primary key ("id"), constraint customer_documents_size_positive check (size > 0), constraint customer_documents_decision check ((status = 'pending') = (decided_at is null) and (status = 'rejected') = (reason is not null)));`);
    this.addSql(`create index "customer_documents_customer_id_created_at_index" on "customer_documents" ("customer_id", "created_at");`);
    this.addSql(`create table "customer_document_files" ("document_id" uuid not null, "key_id" varchar(32) not null, "content" bytea not null, constraint "customer_document_files_pkey" primary key ("document_id"));`);
    // Ciphertext does not compress: stored out of line without Postgres trying to compress it first.
    this.addSql(`alter table "customer_document_files" alter column "content" set storage external;`);
    this.addSql(`create table "verification_levels" ("level" smallint not null, "required_documents" jsonb not null, "can_trade" boolean not null default true, "can_withdraw" boolean not null default true, "max_deposit_per_day" numeric(38,2) null, "max_withdrawal_per_day" numeric(38,2) null, "max_withdrawal_per_month" numeric(38,2) null, "updated_at" timestamptz not null, constraint "verification_levels_pkey" primary key ("level"), constraint verification_levels_level_range check (level >= 0 and level <= 3));`);
    this.addSql(`alter table "customer_documents" add constraint "customer_documents_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "customer_document_files" add constraint "customer_document_files_document_id_foreign" foreign key ("document_id") references "customer_documents" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "customers" add column "verification_level" smallint not null default 0;`);
    this.addSql(`insert into "verification_levels" ("level", "required_documents", "can_trade", "can_withdraw", "updated_at") select l, '[]'::jsonb, true, true, now() from generate_series(0, 3) l on conflict do nothing;`);
    this.addSql("insert into \"email_templates\" (\"id\", \"created_at\", \"updated_at\", \"key\", \"name\", \"default_locale\", \"translations\", \"built_in\") values (gen_random_uuid(), now(), now(), 'document_approved', 'Verification document approved', 'en', '{\"en\":{\"subject\":\"Your verification document is approved\",\"text\":\"Hello {{first_name}},\\n\\nyour document {{file_name}} ({{document_type}}) is approved.\\n\",\"html\":\"<p>Hello {{first_name}},</p><p>your document <strong>{{file_name}}</strong> ({{document_type}}) is approved.</p>\"},\"de\":{\"subject\":\"Ihr Verifizierungsdokument wurde akzeptiert\",\"text\":\"Hallo {{first_name}},\\n\\nIhr Dokument {{file_name}} ({{document_type}}) wurde akzeptiert.\\n\",\"html\":\"<p>Hallo {{first_name}},</p><p>Ihr Dokument <strong>{{file_name}}</strong> ({{document_type}}) wurde akzeptiert.</p>\"}}'::jsonb, true) on conflict (\"key\") do nothing;");
    this.addSql("insert into \"email_templates\" (\"id\", \"created_at\", \"updated_at\", \"key\", \"name\", \"default_locale\", \"translations\", \"built_in\") values (gen_random_uuid(), now(), now(), 'document_rejected', 'Verification document rejected', 'en', '{\"en\":{\"subject\":\"Your verification document was rejected\",\"text\":\"Hello {{first_name}},\\n\\nyour document {{file_name}} ({{document_type}}) was rejected: {{reason}}\\nPlease submit a new one.\\n\",\"html\":\"<p>Hello {{first_name}},</p><p>your document <strong>{{file_name}}</strong> ({{document_type}}) was rejected: {{reason}}</p><p>Please submit a new one.</p>\"},\"de\":{\"subject\":\"Ihr Verifizierungsdokument wurde abgelehnt\",\"text\":\"Hallo {{first_name}},\\n\\nIhr Dokument {{file_name}} ({{document_type}}) wurde abgelehnt: {{reason}}\\nBitte reichen Sie ein neues ein.\\n\",\"html\":\"<p>Hallo {{first_name}},</p><p>Ihr Dokument <strong>{{file_name}}</strong> ({{document_type}}) wurde abgelehnt: {{reason}}</p><p>Bitte reichen Sie ein neues ein.</p>\"}}'::jsonb, true) on conflict (\"key\") do nothing;");
    this.addSql("insert into \"email_templates\" (\"id\", \"created_at\", \"updated_at\", \"key\", \"name\", \"default_locale\", \"translations\", \"built_in\") values (gen_random_uuid(), now(), now(), 'customer_verified', 'Verification level reached', 'en', '{\"en\":{\"subject\":\"Your account is verified to level {{verification_level}}\",\"text\":\"Hello {{first_name}},\\n\\nyour account is now verified to level {{verification_level}}.\\n\",\"html\":\"<p>Hello {{first_name}},</p><p>your account is now verified to level <strong>{{verification_level}}</strong>.</p>\"},\"de\":{\"subject\":\"Ihr Konto ist auf Stufe {{verification_level}} verifiziert\",\"text\":\"Hallo {{first_name}},\\n\\nIhr Konto ist jetzt auf Stufe {{verification_level}} verifiziert.\\n\",\"html\":\"<p>Hallo {{first_name}},</p><p>Ihr Konto ist jetzt auf Stufe <strong>{{verification_level}}</strong> verifiziert.</p>\"}}'::jsonb, true) on conflict (\"key\") do nothing;");
  }

  override async down(): Promise<void> {
    this.addSql(`delete from "email_templates" where "key" in ('document_approved', 'document_rejected', 'customer_verified');`);
    this.addSql(`drop table if exists "customer_document_files" cascade;`);
    this.addSql(`drop table if exists "customer_documents" cascade;`);
    this.addSql(`drop table if exists "verification_levels" cascade;`);
    this.addSql(`alter table "customers" drop column "verification_level";`);
  }
}
