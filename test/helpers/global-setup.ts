import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * Builds the template database once per test run (see migrate-template.ts). It runs in a
 * child process: MikroORM keeps its entity metadata in globals, and jest's global setup
 * shares its realm with in-band test files, which would then see foreign Map objects.
 */
export default function globalSetup(): void {
  execFileSync(process.execPath, ['--import', 'tsx', join(__dirname, 'migrate-template.ts')], { stdio: 'inherit' });
}
