import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Prepares the template database (see migrate-template.ts), builds the served OpenAPI text once
 * for the whole run (see openapi-text.ts) and names this run, so its databases can be told
 * apart from those of a run going on beside it. Both are built in child processes: MikroORM
 * keeps its entity metadata in globals, and jest's global setup shares its realm with in-band
 * test files.
 */
export default async function globalSetup(): Promise<void> {
  process.env.TEST_RUN_ID ??= randomBytes(3).toString('hex');
  const openApiFile = join(tmpdir(), `trading-api-openapi-${process.env.TEST_RUN_ID}.json`);
  const child = (script: string, ...args: string[]) =>
    run(process.execPath, ['--import', 'tsx', join(__dirname, script), ...args]).then(({ stdout, stderr }) => {
      process.stdout.write(stdout);
      process.stderr.write(stderr);
    });
  await Promise.all([child('migrate-template.ts'), child('openapi-text.ts', openApiFile)]);
  process.env.TEST_OPENAPI_TEXT_FILE = openApiFile;
}
