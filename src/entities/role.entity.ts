import { ArrayType, Entity, Property, Unique } from '@mikro-orm/core';
import { BaseEntity } from './base.entity';

/** A named set of permissions. */
@Entity({ tableName: 'roles' })
export class Role extends BaseEntity<'builtIn'> {
  @Property({ type: 'string', length: 64 })
  @Unique()
  name!: string;

  @Property({ type: ArrayType, columnType: 'text[]' })
  permissions: string[] = [];

  @Property({ type: 'boolean' })
  builtIn = false;
}
