import { Migration } from '@mikro-orm/migrations';

/**
 * Support conversations between customers and the desk, their messages (internal notes among
 * them), and the built-in mail that tells a customer the desk answered, in English and German.
 */
export class Migration20261128120500_Conversations extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "conversations" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "customer_id" uuid not null, "subject" varchar(200) not null, "category" varchar(16) null, "ref_type" varchar(16) null, "ref_id" varchar(64) null, "status" varchar(16) not null default 'open', "priority" varchar(16) null, "assignee_id" uuid null, "started_by" varchar(16) not null, "snoozed_until" timestamptz null, "resolved_at" timestamptz null, "status_changed_at" timestamptz not null, "first_response_due_at" timestamptz not null, "first_response_at" timestamptz null, "sla_breached_at" timestamptz null, "last_customer_message_at" timestamptz null, constraint "conversations_pkey" primary key ("id"));`);
    this.addSql(`create index "conversations_customer_id_created_at_index" on "conversations" ("customer_id", "created_at");`);
    this.addSql(`create index "conversations_status_updated_at_index" on "conversations" ("status", "updated_at");`);
    this.addSql(`create table "conversation_messages" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "conversation_id" uuid not null, "customer_id" uuid not null, "author_type" varchar(16) not null, "author_id" uuid null, "body" text not null, "internal" boolean not null default false, "attachment_ids" jsonb not null, constraint "conversation_messages_pkey" primary key ("id"));`);
    this.addSql(`create index "conversation_messages_conversation_id_created_at_index" on "conversation_messages" ("conversation_id", "created_at");`);
    this.addSql(`create index "conversation_messages_customer_id_author_type_created_at_index" on "conversation_messages" ("customer_id", "author_type", "created_at");`);
    this.addSql("insert into \"email_templates\" (\"id\", \"created_at\", \"updated_at\", \"key\", \"name\", \"default_locale\", \"translations\", \"built_in\") values (gen_random_uuid(), now(), now(), 'conversation_reply', 'Support replied', 'en', '{\"en\":{\"subject\":\"Support answered your question\",\"text\":\"Hello {{first_name}},\\n\\nour support team answered in your conversation \\\"{{subject}}\\\". Read the answer here:\\n\\n{{conversation_url}}\\n\",\"html\":\"<p>Hello {{first_name}},</p><p>our support team answered in your conversation “{{subject}}”.</p><p><a href=\\\"{{conversation_url}}\\\">Read the answer</a></p>\"},\"de\":{\"subject\":\"Der Support hat Ihre Frage beantwortet\",\"text\":\"Hallo {{first_name}},\\n\\nunser Support hat in Ihrer Unterhaltung „{{subject}}“ geantwortet. Hier lesen Sie die Antwort:\\n\\n{{conversation_url}}\\n\",\"html\":\"<p>Hallo {{first_name}},</p><p>unser Support hat in Ihrer Unterhaltung „{{subject}}“ geantwortet.</p><p><a href=\\\"{{conversation_url}}\\\">Antwort lesen</a></p>\"}}'::jsonb, true) on conflict (\"key\") do nothing;");
  }

  override async down(): Promise<void> {
    this.addSql(`delete from "email_templates" where "key" = 'conversation_reply';`);
    this.addSql(`drop table if exists "conversation_messages";`);
    this.addSql(`drop table if exists "conversations";`);
  }
}
