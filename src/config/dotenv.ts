import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';

/**
 * Reads `.env` in `dir` (the working directory) into `env` at start, for a developer running
 * the service on the host: a variable already set, even to the empty string, wins over the
 * file, so a deployment's environment and a one-off `PORT=9000 npm start` are never overridden.
 * No file is no change. Answers the names taken from the file (never their values: the file
 * holds secrets).
 */
export function applyDotEnv(env: NodeJS.ProcessEnv = process.env, dir: string = process.cwd()): string[] {
  let text: string;
  try {
    text = readFileSync(join(dir, '.env'), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const taken: string[] = [];
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (env[name] !== undefined) continue;
    env[name] = value;
    taken.push(name);
  }
  return taken;
}
