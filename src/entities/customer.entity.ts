import { type Ref } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { PrincipalEntity } from './principal.entity';
import { StaffUser } from './staff-user.entity';
import { Team } from './team.entity';

@Entity({ tableName: 'customers' })
export class Customer extends PrincipalEntity<
  'locale' | 'country' | 'affiliateId' | 'verificationLevel' | 'accountManager' | 'team'
> {
  @Property({ type: 'string', length: 320 })
  @Unique()
  declare email: string;

  @Property({ type: 'string', length: 100 })
  firstName!: string;

  @Property({ type: 'string', length: 100 })
  lastName!: string;

  @Property({ type: 'string', length: 16 })
  locale: string = 'en';

  /** ISO 3166-1 alpha-2, or null when unknown. */
  @Property({ type: 'string', length: 2, nullable: true })
  country?: string | null = null;

  /** The affiliate the customer came through, as staff typed it; webhooks with this affiliate_id get its events. */
  @Property({ type: 'string', length: 255, nullable: true })
  affiliateId?: string | null = null;

  /**
   * 0 to 3 (decisions, section 16): what the customer may do is the matching row of
   * verification_levels. Raised by approved documents (domain/compliance) or set by staff.
   */
  @Property({ type: 'smallint', default: 0 })
  verificationLevel: number = 0;

  /** The staff user who manages the customer: `own`-scope staff see exactly the customers they manage. */
  @ManyToOne({ entity: () => StaffUser, ref: true, nullable: true, deleteRule: 'set null' })
  @Index()
  accountManager?: Ref<StaffUser> | null = null;

  /** The customer's team: `team`-scope staff see the customers of their teams (a lead, of the teams below too). */
  @ManyToOne({ entity: () => Team, ref: true, nullable: true, deleteRule: 'set null' })
  @Index()
  team?: Ref<Team> | null = null;
}
