import { Migration } from '@mikro-orm/migrations';

/**
 * Teams of staff (nested through parent_team_id), membership with a role, each staff user's
 * data scope (existing users keep `all`, so nothing changes on upgrade), each customer's
 * account manager and team, which the scope of `own` and `team` users reads, the broker's
 * auto-assignment settings, and the scope a staff report was asked under.
 */
export class Migration20261128100000_TeamsAndScope extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "teams" (
      "id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null,
      "name" varchar(100) not null, "parent_team_id" uuid null,
      constraint "teams_pkey" primary key ("id"));`);
    this.addSql(`create unique index "teams_name_ci" on "teams" (lower("name"));`);
    this.addSql(`create index "teams_parent_team_id_index" on "teams" ("parent_team_id");`);
    this.addSql(
      `alter table "teams" add constraint "teams_parent_team_id_foreign" foreign key ("parent_team_id") references "teams" ("id") on update cascade on delete restrict;`,
    );
    this.addSql(`create table "team_members" (
      "team_id" uuid not null, "user_id" uuid not null, "role" varchar(8) not null, "created_at" timestamptz not null,
      constraint "team_members_pkey" primary key ("team_id", "user_id"),
      constraint "team_members_role_check" check ("role" in ('member', 'lead')));`);
    this.addSql(`create index "team_members_user_id_index" on "team_members" ("user_id");`);
    this.addSql(
      `alter table "team_members" add constraint "team_members_team_id_foreign" foreign key ("team_id") references "teams" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "team_members" add constraint "team_members_user_id_foreign" foreign key ("user_id") references "staff_users" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "staff_users" add column "data_scope" varchar(4) not null default 'all', add constraint "staff_users_data_scope_check" check ("data_scope" in ('own', 'team', 'all'));`,
    );
    this.addSql(`alter table "customers" add column "account_manager_id" uuid null, add column "team_id" uuid null;`);
    this.addSql(
      `alter table "customers" add constraint "customers_account_manager_id_foreign" foreign key ("account_manager_id") references "staff_users" ("id") on update cascade on delete set null;`,
    );
    this.addSql(
      `alter table "customers" add constraint "customers_team_id_foreign" foreign key ("team_id") references "teams" ("id") on update cascade on delete set null;`,
    );
    this.addSql(`create index "customers_account_manager_id_index" on "customers" ("account_manager_id");`);
    this.addSql(`create index "customers_team_id_index" on "customers" ("team_id");`);
    this.addSql(`alter table "broker_settings" add column "assignment" jsonb not null default '{"strategy":"none","country_rules":[]}';`);
    this.addSql(`alter table "broker_settings" add column "assignment_cursor" int not null default 0;`);
    this.addSql(`alter table "reports" add column "scope" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "reports" drop column "scope";`);
    this.addSql(`alter table "broker_settings" drop column "assignment", drop column "assignment_cursor";`);
    this.addSql(`alter table "customers" drop column "account_manager_id", drop column "team_id";`);
    this.addSql(`alter table "staff_users" drop column "data_scope";`);
    this.addSql(`drop table "team_members";`);
    this.addSql(`drop table "teams";`);
  }
}
