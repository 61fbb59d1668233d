import { Collection } from '@mikro-orm/core';
import { Entity, ManyToMany, Property, Unique } from '@mikro-orm/decorators/legacy';
import { PrincipalEntity } from './principal.entity';
import { Role } from './role.entity';

@Entity({ tableName: 'staff_users' })
export class StaffUser extends PrincipalEntity<'roles'> {
  @Property({ type: 'string', length: 320 })
  @Unique()
  declare email: string;

  @Property({ type: 'string', length: 200 })
  fullName!: string;

  @ManyToMany({ entity: () => Role, pivotTable: 'staff_user_roles', joinColumn: 'staff_user_id', inverseJoinColumn: 'role_id' })
  roles = new Collection<Role>(this);
}
