import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/** One of the broker's sales statuses (a stage of its own sales process), keyed as customers name it. */
@Entity({ tableName: 'sales_statuses' })
export class SalesStatus {
  @PrimaryKey({ type: 'string', length: 64 })
  key!: string;

  @Property({ type: 'string', length: 100 })
  name!: string;

  @Property({ type: 'integer' })
  position!: number;

  @Property({ type: 'boolean' })
  isFinal!: boolean;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  updatedAt: Date = new Date();
}
