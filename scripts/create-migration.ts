/**
 * Writes a migration for the difference between the entities and the migrated schema:
 *   npm run migration:create
 * It migrates a scratch database up first, diffs, and prints the file to add to
 * src/db/migrations/index.ts.
 */
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { MikroORM } from '@mikro-orm/postgresql';
import { ensureDatabase, runMigrations } from '../src/db/database';
import { ormConfig } from '../src/db/orm-config';
import { isSequenceNoise } from '../src/db/schema-noise';

/**
 * A generated statement that is not a change: sequence-default noise (see schema-noise.ts), or
 * the re-creation of a trigger or stored function that MikroORM 7 writes into every `down`.
 * Triggers and functions are written by hand in migrations and left unmanaged by the ORM
 * (orm-config.ts), but its reverse diff still sees them as missing from the entities, and
 * re-creates them with empty bodies.
 */
function isGeneratedNoise(sql: string): boolean {
  return isSequenceNoise(sql) || /^\s*create (or replace function|trigger) /i.test(sql);
}

/** Drops a generated migration's statements that are only noise; removes the file when its `up` is left empty. */
function dropGeneratedNoise(file: string): boolean {
  const source = readFileSync(file, 'utf8');
  // One addSql call, its template literal spanning lines when the statement does.
  const kept = source.replace(/^ *this\.addSql\(`((?:[^`\\]|\\.)*)`\);\n/gms, (call, sql: string) =>
    isGeneratedNoise(sql) ? '' : call,
  );
  const upBody = kept.split(/override (?:async )?down/)[0] ?? '';
  if (!upBody.includes('this.addSql(')) {
    unlinkSync(file);
    return false;
  }
  writeFileSync(file, kept.replace(/\n{3,}/g, '\n\n'));
  return true;
}

/** Appends the new migration to the explicit list that the runtime loads. */
function registerMigration(name: string): void {
  const file = 'src/db/migrations/index.ts';
  const source = readFileSync(file, 'utf8')
    .replace(/(\nexport const MIGRATIONS)/, `import { ${name} } from './${name}';\n$1`)
    .replace(/,?\s*\];\s*$/, `,\n  { name: '${name}', class: ${name} },\n];\n`);
  writeFileSync(file, source);
}

async function main(): Promise<void> {
  const url = process.env.MIGRATION_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/trading_migration_scratch';
  await ensureDatabase(url);
  await runMigrations(url);
  const orm = await MikroORM.init(ormConfig(url));
  try {
    const result = await orm.migrator.create('src/db/migrations', false, false, process.argv[2]);
    if (!result.fileName) console.log('No changes: entities match the migrations.');
    else if (!dropGeneratedNoise(`src/db/migrations/${result.fileName}`)) console.log('No changes beyond generated noise.');
    else {
      registerMigration(result.fileName.replace(/\.ts$/, ''));
      console.log(`Wrote src/db/migrations/${result.fileName} and listed it in src/db/migrations/index.ts`);
    }
  } finally {
    await orm.close(true);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
