import { Collection } from '@mikro-orm/core';
import { Check, Entity, ManyToMany, Property, Unique } from '@mikro-orm/decorators/legacy';
import { PrincipalEntity } from './principal.entity';
import { Role } from './role.entity';

export const DATA_SCOPES = ['own', 'team', 'all'] as const;
export type DataScopeName = (typeof DATA_SCOPES)[number];

@Entity({ tableName: 'staff_users' })
@Check({ name: 'staff_users_data_scope_check', expression: `"data_scope" in ('own', 'team', 'all')` })
export class StaffUser extends PrincipalEntity<'roles' | 'dataScope'> {
  /** Whose customers the user sees: the ones it manages, also its teams', or all (the default). */
  @Property({ type: 'string', length: 4, default: 'all' })
  dataScope: DataScopeName = 'all';

  @Property({ type: 'string', length: 320 })
  @Unique()
  declare email: string;

  @Property({ type: 'string', length: 200 })
  fullName!: string;

  @ManyToMany({ entity: () => Role, pivotTable: 'staff_user_roles', joinColumn: 'staff_user_id', inverseJoinColumn: 'role_id' })
  roles = new Collection<Role>(this);
}
