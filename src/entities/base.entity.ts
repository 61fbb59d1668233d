import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/** Every table has a uuid id and creation/update times in UTC. */
export abstract class BaseEntity<Optional = never> {
  /** Properties with defaults, which `em.create` need not be given. */
  [OptionalProps]?: 'id' | 'createdAt' | 'updatedAt' | Optional;

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
