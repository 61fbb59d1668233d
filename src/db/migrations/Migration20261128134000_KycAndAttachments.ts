import { Migration } from '@mikro-orm/migrations';

/**
 * Conversation attachments (metadata, and sealed bytes kept apart as documents' are), and the
 * audit actor `integration`: a KYC provider's review decides documents under its own name.
 */
export class Migration20261128134000_KycAndAttachments extends Migration {
  override name = 'Migration20261128134000_KycAndAttachments';

  override up(): void | Promise<void> {
    this.addSql(`create table "conversation_attachments" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "customer_id" uuid not null, "uploaded_by_type" varchar(16) not null, "uploaded_by" uuid not null, "file_name" varchar(255) not null, "content_type" text not null, "size" int not null, "message_id" uuid null, "conversation_id" uuid null, primary key ("id"));`);
    this.addSql(`create index "conversation_attachments_message_id_index" on "conversation_attachments" ("message_id");`);
    this.addSql(`create index "conversation_attachments_customer_id_created_at_index" on "conversation_attachments" ("customer_id", "created_at");`);

    this.addSql(`create table "conversation_attachment_files" ("attachment_id" uuid not null, "key_id" varchar(32) not null, "content" bytea not null, primary key ("attachment_id"));`);
    // Sealed bytes do not compress: stored out of line as they are.
    this.addSql(`alter table "conversation_attachment_files" alter column "content" set storage external;`);

    this.addSql(`alter table "audit_entries" drop constraint "audit_entries_actor_type_check";`);
    this.addSql(`alter table "audit_entries" add constraint "audit_entries_actor_type_check" check ("actor_type" in ('user', 'api_token', 'system', 'integration'));`);

    this.addSql(`alter table "conversation_attachments" add constraint "conversation_attachments_size_positive" check (size > 0);`);
    this.addSql(`alter table "conversation_attachments" add constraint "conversation_attachments_content_type_check" check ("content_type" in ('application/pdf', 'image/jpeg', 'image/png'));`);

    this.addSql(`alter table "conversation_attachment_files" add constraint "conversation_attachment_files_attachment_id_foreign" foreign key ("attachment_id") references "conversation_attachments" ("id") on update cascade on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "conversation_attachment_files" drop constraint "conversation_attachment_files_attachment_id_foreign";`);

    this.addSql(`drop table if exists "conversation_attachments" cascade;`);
    this.addSql(`drop table if exists "conversation_attachment_files" cascade;`);

    this.addSql(`alter table "audit_entries" drop constraint "audit_entries_actor_type_check";`);
    this.addSql(`alter table "audit_entries" add constraint "audit_entries_actor_type_check" check ("actor_type" in ('user', 'api_token', 'system'));`);

  }

}
