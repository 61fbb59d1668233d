import { type Ref } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

/**
 * A team of staff users. Teams nest through `parentTeam`: the lead of a team also sees the
 * customers of every team below it. Names are unique ignoring case.
 */
@Entity({ tableName: 'teams' })
@Index({ name: 'teams_name_ci', expression: `create unique index "teams_name_ci" on "teams" (lower("name"))` })
export class Team extends BaseEntity<'parentTeam'> {
  @Property({ type: 'string', length: 100 })
  name!: string;

  @ManyToOne({ entity: () => Team, ref: true, nullable: true, deleteRule: 'restrict' })
  @Index()
  parentTeam?: Ref<Team> | null = null;
}
