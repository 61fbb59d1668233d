import { Migration } from '@mikro-orm/migrations';

export class Migration20261122194044_Idempotency extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "idempotency_keys" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "scope" varchar(80) not null, "key" varchar(255) not null, "request_hash" varchar(64) not null, "state" text check ("state" in ('in_flight', 'completed')) not null default 'in_flight', "response_status" int null, "response_body" jsonb null, "expires_at" timestamptz not null, constraint "idempotency_keys_pkey" primary key ("id"));`);
    this.addSql(`alter table "idempotency_keys" add constraint "idempotency_keys_scope_key_unique" unique ("scope", "key");`);

  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "idempotency_keys" cascade;`);

  }

}
