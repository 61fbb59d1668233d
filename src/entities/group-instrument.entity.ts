import { decimalText } from './column-types';
import { OptionalProps, PrimaryKeyProp, type Ref } from '@mikro-orm/core';
import { Entity, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { Group } from './group.entity';
import { Instrument } from './instrument.entity';

/** How one group trades one instrument. Deleting the group deletes its rows. */
@Entity({ tableName: 'group_instruments' })
export class GroupInstrument {
  [PrimaryKeyProp]?: ['group', 'instrument'];
  [OptionalProps]?: 'createdAt' | 'updatedAt' | 'commissionValue';

  @ManyToOne({ entity: () => Group, primary: true, deleteRule: 'cascade', ref: true })
  group!: Ref<Group>;

  @ManyToOne({ entity: () => Instrument, primary: true, deleteRule: 'cascade', ref: true })
  instrument!: Ref<Instrument>;

  @Property({ type: 'boolean' })
  enabled!: boolean;

  /** Added to the raw quote's spread, in points (10^-digits). */
  @Property({ type: decimalText(), columnType: 'numeric(12,2)' })
  spread!: string;

  /** Overrides the group's commission_value for this instrument when set. */
  @Property({ type: decimalText(), columnType: 'numeric(12,4)', nullable: true })
  commissionValue?: string | null = null;

  @Property({ type: decimalText(), columnType: 'numeric(12,4)' })
  swapLong!: string;

  @Property({ type: decimalText(), columnType: 'numeric(12,4)' })
  swapShort!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
