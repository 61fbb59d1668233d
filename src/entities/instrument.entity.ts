import { Entity, Property, Unique } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import { decimalText } from './column-types';

/** A tradable symbol: EURUSD is 100,000 EUR per lot, priced in USD to 5 digits. */
@Entity({ tableName: 'instruments' })
export class Instrument extends BaseEntity<'description'> {
  @Property({ type: 'string', length: 32 })
  @Unique()
  symbol!: string;

  @Property({ type: 'text', nullable: true })
  description?: string | null = null;

  @Property({ type: 'integer' })
  digits!: number;

  @Property({ type: decimalText(), columnType: 'numeric(20,4)' })
  contractSize!: string;

  @Property({ type: 'string', length: 3 })
  baseCurrency!: string;

  @Property({ type: 'string', length: 3 })
  quoteCurrency!: string;
}
