import { Entity, Property, Unique } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import { bigintText, decimalText } from './column-types';

/** The lots one closed order counted toward one bonus: unique, so an order counts once. */
@Entity({ tableName: 'bonus_turnover' })
@Unique({ properties: ['bonusId', 'ticket'] })
export class BonusTurnover extends BaseEntity {
  @Property({ type: 'uuid' })
  bonusId!: string;

  @Property({ type: bigintText(), columnType: 'bigint' })
  ticket!: string;

  @Property({ type: decimalText(), columnType: 'numeric(20,2)' })
  lots!: string;
}
