import { Migration } from '@mikro-orm/migrations';

/**
 * Tasks for staff (about a customer or none), with the marks that make task.overdue and
 * task.reminder fire once, task rules that make one task per (rule, event), and the built-in
 * mail template `task_reminder` the assignee gets with each.
 */
export class Migration20261128105000_Tasks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "tasks" (
      "id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null,
      "title" varchar(200) not null, "body" text null, "kind" varchar(16) not null, "priority" varchar(8) not null,
      "status" varchar(12) not null default 'open', "due_at" timestamptz not null, "remind_at" timestamptz null,
      "assignee_id" uuid null, "customer_id" uuid null, "created_by" uuid null, "completed_at" timestamptz null,
      "completed_by" uuid null, "overdue_at" timestamptz null, "reminded_at" timestamptz null, "rule_id" uuid null,
      "source_event_id" uuid null,
      constraint "tasks_pkey" primary key ("id"));`);
    this.addSql(`create index "tasks_assignee_id_status_index" on "tasks" ("assignee_id", "status");`);
    this.addSql(`create index "tasks_customer_id_created_at_index" on "tasks" ("customer_id", "created_at");`);
    this.addSql(
      `create index "tasks_overdue_due" on "tasks" ("due_at") where "overdue_at" is null and "status" in ('open', 'in_progress');`,
    );
    this.addSql(
      `create index "tasks_reminder_due" on "tasks" ("remind_at") where "reminded_at" is null and "remind_at" is not null and "status" in ('open', 'in_progress');`,
    );
    this.addSql(`alter table "tasks" add constraint "tasks_rule_id_source_event_id_unique" unique ("rule_id", "source_event_id");`);
    this.addSql(`create table "task_rules" (
      "id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null,
      "on_event" varchar(64) not null, "title" varchar(200) not null, "kind" varchar(16) not null,
      "due_in_minutes" int not null, "assign_to" varchar(36) not null, "is_active" boolean not null default true,
      "created_by" uuid null,
      constraint "task_rules_pkey" primary key ("id"));`);
    this.addSql(
      `insert into "email_templates" ("id", "created_at", "updated_at", "key", "name", "default_locale", "translations", "built_in") values (gen_random_uuid(), now(), now(), 'task_reminder', 'Task reminder', 'en', '{"en": {"subject": "Task {{event}}: {{title}}", "text": "Hello {{full_name}},\\n\\nyour task {{title}} ({{kind}}, {{priority}}) is due at {{due_at}}: {{event}}.\\n", "html": "<p>Hello {{full_name}},</p><p>your task <strong>{{title}}</strong> ({{kind}}, {{priority}}) is due at {{due_at}}: {{event}}.</p>"}, "de": {"subject": "Aufgabe {{event}}: {{title}}", "text": "Hallo {{full_name}},\\n\\nIhre Aufgabe {{title}} ({{kind}}, {{priority}}) ist fällig am {{due_at}}: {{event}}.\\n", "html": "<p>Hallo {{full_name}},</p><p>Ihre Aufgabe <strong>{{title}}</strong> ({{kind}}, {{priority}}) ist fällig am {{due_at}}: {{event}}.</p>"}}'::jsonb, true) on conflict ("key") do nothing;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`delete from "email_templates" where "key" = 'task_reminder';`);
    this.addSql(`drop table "task_rules";`);
    this.addSql(`drop table "tasks";`);
  }
}
