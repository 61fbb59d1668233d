import { Migration } from '@mikro-orm/migrations';

/** Support conversations between customers and the desk, and their messages (internal notes among them). */
export class Migration20261128120000_Conversations extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "conversations" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "customer_id" uuid not null, "subject" varchar(200) not null, "category" varchar(16) null, "ref_type" varchar(16) null, "ref_id" varchar(64) null, "status" varchar(16) not null default 'open', "priority" varchar(16) null, "assignee_id" uuid null, "started_by" varchar(16) not null, "snoozed_until" timestamptz null, "resolved_at" timestamptz null, "status_changed_at" timestamptz not null, "first_response_due_at" timestamptz not null, "first_response_at" timestamptz null, "sla_breached_at" timestamptz null, "last_customer_message_at" timestamptz null, constraint "conversations_pkey" primary key ("id"));`);
    this.addSql(`create index "conversations_customer_id_created_at_index" on "conversations" ("customer_id", "created_at");`);
    this.addSql(`create index "conversations_status_updated_at_index" on "conversations" ("status", "updated_at");`);
    this.addSql(`create table "conversation_messages" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "conversation_id" uuid not null, "customer_id" uuid not null, "author_type" varchar(16) not null, "author_id" uuid null, "body" text not null, "internal" boolean not null default false, "attachment_ids" jsonb not null, constraint "conversation_messages_pkey" primary key ("id"));`);
    this.addSql(`create index "conversation_messages_conversation_id_created_at_index" on "conversation_messages" ("conversation_id", "created_at");`);
    this.addSql(`create index "conversation_messages_customer_id_author_type_created_at_index" on "conversation_messages" ("customer_id", "author_type", "created_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "conversation_messages";`);
    this.addSql(`drop table if exists "conversations";`);
  }
}
