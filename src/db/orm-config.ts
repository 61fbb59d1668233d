import 'reflect-metadata';
import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { ENTITIES } from '../entities';
import { MIGRATIONS } from './migrations';

export function ormConfig(databaseUrl: string, overrides: Partial<Options> = {}): Options {
  return defineConfig({
    clientUrl: databaseUrl,
    entities: ENTITIES,
    extensions: [Migrator],
    // Forces a unit of work per request and per job: touching the global EntityManager throws.
    allowGlobalContext: false,
    forceUtcTimezone: true,
    // numeric columns come back as strings; money is then parsed into a decimal, never a float.
    pool: { min: 0, max: 10, idleTimeoutMillis: 10_000 },
    migrations: {
      // Listed explicitly so compiled and ts-jest runs find the same migrations.
      migrationsList: MIGRATIONS,
      path: 'src/db/migrations',
      tableName: 'mikro_orm_migrations',
      // Each migration in a transaction of its own, not all pending ones in one: a migration
      // that builds an index on a large table with CREATE INDEX CONCURRENTLY says
      // isTransactional() false and must run outside any transaction (docs/operations.md).
      transactional: true,
      allOrNothing: false,
      snapshot: false,
      emit: 'ts',
    },
    debug: false,
    // The ORM's own console output (migrator progress) goes nowhere unless a caller routes it.
    logger: () => undefined,
    ...overrides,
  });
}
