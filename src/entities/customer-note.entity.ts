import { Entity, Index, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

/** A staff note on a customer. Deleting one only stamps `deletedAt`: the trail keeps it. */
@Entity({ tableName: 'customer_notes' })
@Index({ properties: ['customerId', 'createdAt'] })
export class CustomerNote extends BaseEntity<'pinned' | 'deletedAt' | 'deletedBy'> {
  @Property({ type: 'uuid' })
  customerId!: string;

  /** The staff user who wrote it: the only one who may edit it. */
  @Property({ type: 'uuid' })
  authorId!: string;

  @Property({ type: 'text' })
  body!: string;

  @Property({ type: 'boolean', default: false })
  pinned: boolean = false;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  deletedAt?: Date | null = null;

  @Property({ type: 'uuid', nullable: true })
  deletedBy?: string | null = null;
}
