import { ArrayType } from '@mikro-orm/core';
import { Entity, Index, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

/** A named set of permissions. Names are unique ignoring case (`ADMIN` cannot sit beside `admin`). */
@Entity({ tableName: 'roles' })
@Index({ name: 'roles_name_ci_unique', expression: 'create unique index "roles_name_ci_unique" on "roles" (lower("name"))' })
export class Role extends BaseEntity<'builtIn'> {
  @Property({ type: 'string', length: 64 })
  name!: string;

  @Property({ type: ArrayType, columnType: 'text[]' })
  permissions: string[] = [];

  @Property({ type: 'boolean' })
  builtIn = false;
}
