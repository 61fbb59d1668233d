import { PrimaryKeyProp, type Ref } from '@mikro-orm/core';
import { Check, Entity, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { StaffUser } from './staff-user.entity';
import { Team } from './team.entity';

export const TEAM_ROLES = ['member', 'lead'] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];

/** A staff user's place in a team; a `lead` also sees the customers of the teams below it. */
@Entity({ tableName: 'team_members' })
@Check({ name: 'team_members_role_check', expression: `"role" in ('member', 'lead')` })
export class TeamMember {
  [PrimaryKeyProp]?: ['team', 'user'];

  @ManyToOne({ entity: () => Team, ref: true, primary: true, deleteRule: 'cascade' })
  team!: Ref<Team>;

  @ManyToOne({ entity: () => StaffUser, ref: true, primary: true, deleteRule: 'cascade' })
  @Index()
  user!: Ref<StaffUser>;

  @Property({ type: 'string', length: 8 })
  role!: TeamRole;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  createdAt: Date = new Date();
}
