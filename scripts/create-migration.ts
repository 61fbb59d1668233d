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

/** Drops the statements of a generated migration that are only sequence-default noise (see schema-noise.ts). */
function dropSequenceNoise(file: string): boolean {
  const lines = readFileSync(file, 'utf8').split('\n');
  const kept = lines.filter((line) => !(line.includes('this.addSql(') && isSequenceNoise(line)));
  const upBody = kept.join('\n').split('override async down')[0] ?? '';
  if (!upBody.includes('this.addSql(')) {
    unlinkSync(file);
    return false;
  }
  writeFileSync(file, kept.join('\n').replace(/\n{3,}/g, '\n\n'));
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
    const result = await orm.getMigrator().createMigration('src/db/migrations', false, false, process.argv[2]);
    if (!result.fileName) console.log('No changes: entities match the migrations.');
    else if (!dropSequenceNoise(`src/db/migrations/${result.fileName}`)) console.log('No changes beyond sequence-default noise.');
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
