import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

/**
 * Prepares the template database (see migrate-template.ts) and names this run, so its
 * databases can be told apart from those of a run going on beside it. The template is
 * built in a child process: MikroORM keeps its entity metadata in globals, and jest's
 * global setup shares its realm with in-band test files.
 */
export default function globalSetup(): void {
  process.env.TEST_RUN_ID ??= randomBytes(3).toString('hex');
  execFileSync(process.execPath, ['--import', 'tsx', join(__dirname, 'migrate-template.ts')], { stdio: 'inherit' });
}
