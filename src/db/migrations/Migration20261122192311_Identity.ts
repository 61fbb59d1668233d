import { Migration } from '@mikro-orm/migrations';

export class Migration20261122192311_Identity extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "api_tokens" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "name" varchar(100) not null, "token_hash" varchar(64) not null, "token_prefix" varchar(16) not null, "scopes" text[] not null, "issued_by_id" uuid not null, "expires_at" timestamptz null, "revoked_at" timestamptz null, "last_used_at" timestamptz null, constraint "api_tokens_pkey" primary key ("id"));`);
    this.addSql(`alter table "api_tokens" add constraint "api_tokens_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "api_tokens_issued_by_id_index" on "api_tokens" ("issued_by_id");`);

    this.addSql(`create table "audit_entries" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "actor_type" text check ("actor_type" in ('user', 'api_token', 'system')) not null, "actor_id" uuid null, "api_token_id" uuid null, "action" varchar(64) not null, "entity_type" varchar(64) not null, "entity_id" varchar(64) null, "before" jsonb null, "after" jsonb null, "request_id" varchar(64) null, constraint "audit_entries_pkey" primary key ("id"));`);
    this.addSql(`create index "audit_entries_actor_id_created_at_index" on "audit_entries" ("actor_id", "created_at");`);
    this.addSql(`create index "audit_entries_entity_type_entity_id_index" on "audit_entries" ("entity_type", "entity_id");`);
    this.addSql(`create index "audit_entries_created_at_index" on "audit_entries" ("created_at");`);

    this.addSql(`create table "totp_backup_codes" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "principal_type" text check ("principal_type" in ('user', 'customer')) not null, "principal_id" uuid not null, "code_hash" varchar(64) not null, "used_at" timestamptz null, constraint "totp_backup_codes_pkey" primary key ("id"));`);
    this.addSql(`alter table "totp_backup_codes" add constraint "totp_backup_codes_code_hash_unique" unique ("code_hash");`);
    this.addSql(`create index "totp_backup_codes_principal_type_principal_id_index" on "totp_backup_codes" ("principal_type", "principal_id");`);

    this.addSql(`create table "broker_settings" ("id" int not null default 1, "access_token_ttl_seconds" int not null default 900, "updated_at" timestamptz not null, constraint "broker_settings_pkey" primary key ("id"));`);

    this.addSql(`create table "customers" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "password_hash" varchar(255) not null, "is_active" boolean not null default true, "totp_enabled" boolean not null default false, "totp_secret" text null, "totp_pending_secret" text null, "totp_last_step" int null, "email" varchar(320) not null, "first_name" varchar(100) not null, "last_name" varchar(100) not null, "locale" varchar(16) not null default 'en', "country" varchar(2) null, constraint "customers_pkey" primary key ("id"));`);
    this.addSql(`alter table "customers" add constraint "customers_email_unique" unique ("email");`);

    this.addSql(`create table "refresh_tokens" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "session_id" uuid not null, "token_hash" varchar(64) not null, "expires_at" timestamptz not null, "used_at" timestamptz null, constraint "refresh_tokens_pkey" primary key ("id"));`);
    this.addSql(`alter table "refresh_tokens" add constraint "refresh_tokens_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "refresh_tokens_session_id_index" on "refresh_tokens" ("session_id");`);

    this.addSql(`create table "roles" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "name" varchar(64) not null, "permissions" text[] not null, "built_in" boolean not null default false, constraint "roles_pkey" primary key ("id"));`);
    this.addSql(`alter table "roles" add constraint "roles_name_unique" unique ("name");`);

    this.addSql(`create table "sessions" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "principal_type" text check ("principal_type" in ('user', 'customer')) not null, "principal_id" uuid not null, "ip" varchar(64) null, "user_agent" varchar(512) null, "last_used_at" timestamptz not null, "expires_at" timestamptz not null, "revoked_at" timestamptz null, "revoked_reason" varchar(64) null, constraint "sessions_pkey" primary key ("id"));`);
    this.addSql(`create index "sessions_principal_type_principal_id_index" on "sessions" ("principal_type", "principal_id");`);

    this.addSql(`create table "staff_users" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "password_hash" varchar(255) not null, "is_active" boolean not null default true, "totp_enabled" boolean not null default false, "totp_secret" text null, "totp_pending_secret" text null, "totp_last_step" int null, "email" varchar(320) not null, "full_name" varchar(200) not null, constraint "staff_users_pkey" primary key ("id"));`);
    this.addSql(`alter table "staff_users" add constraint "staff_users_email_unique" unique ("email");`);

    this.addSql(`create table "staff_user_roles" ("staff_user_id" uuid not null, "role_id" uuid not null, constraint "staff_user_roles_pkey" primary key ("staff_user_id", "role_id"));`);

    this.addSql(`alter table "staff_user_roles" add constraint "staff_user_roles_staff_user_id_foreign" foreign key ("staff_user_id") references "staff_users" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "staff_user_roles" add constraint "staff_user_roles_role_id_foreign" foreign key ("role_id") references "roles" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "staff_user_roles" drop constraint "staff_user_roles_role_id_foreign";`);

    this.addSql(`alter table "staff_user_roles" drop constraint "staff_user_roles_staff_user_id_foreign";`);

    this.addSql(`drop table if exists "api_tokens" cascade;`);

    this.addSql(`drop table if exists "audit_entries" cascade;`);

    this.addSql(`drop table if exists "totp_backup_codes" cascade;`);

    this.addSql(`drop table if exists "broker_settings" cascade;`);

    this.addSql(`drop table if exists "customers" cascade;`);

    this.addSql(`drop table if exists "refresh_tokens" cascade;`);

    this.addSql(`drop table if exists "roles" cascade;`);

    this.addSql(`drop table if exists "sessions" cascade;`);

    this.addSql(`drop table if exists "staff_users" cascade;`);

    this.addSql(`drop table if exists "staff_user_roles" cascade;`);
  }

}
