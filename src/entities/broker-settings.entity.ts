import { Entity, PrimaryKey, Property } from '@mikro-orm/core';

/** The broker's settings: one row (id 1), created by the migration with the defaults. */
@Entity({ tableName: 'broker_settings' })
export class BrokerSettings {
  @PrimaryKey({ type: 'integer', autoincrement: false })
  id = 1;

  @Property({ type: 'integer' })
  accessTokenTtlSeconds = 900;

  @Property({ type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
