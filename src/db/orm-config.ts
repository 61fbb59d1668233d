import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { ENTITIES } from '../entities';
import { MIGRATIONS } from './migrations';

/**
 * Entities use the legacy decorators (`@mikro-orm/decorators/legacy`) with MikroORM's default
 * metadata provider, which reads nothing from `design:type` metadata: every property states its
 * type (src/entities/column-types.ts), so the entities mean the same under tsc, the test
 * transformer and tsx, whichever of them emits decorator metadata. (`reflect-metadata` stays a
 * dependency only because the legacy decorators' entry point loads it.)
 */
export function ormConfig(databaseUrl: string, overrides: Options = {}): Options {
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
      // Listed explicitly so compiled runs and test runs find the same migrations.
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
    schemaGenerator: {
      // Every foreign key the committed migrations made says ON UPDATE CASCADE (MikroORM 6
      // inferred it from a relation's default cascade); MikroORM 7 infers no rule, and would
      // otherwise drop and re-add each key without it in the next generated migration.
      defaultUpdateRule: 'cascade',
      // Triggers and stored functions are written by hand in migrations (each function's text
      // lives in src/db/functions, and the schema-drift test holds the database to it).
      // MikroORM 7 manages both from entity metadata and would drop every one the entities do
      // not declare.
      ignoreTriggers: true,
      ignoreRoutines: true,
    },
    debug: false,
    // The ORM's own console output (migrator progress) goes nowhere unless a caller routes it.
    logger: () => undefined,
    ...overrides,
  });
}
