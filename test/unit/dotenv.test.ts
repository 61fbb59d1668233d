import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config/config';
import { applyDotEnv } from '../../src/config/dotenv';

/** `.env` in the working directory is read at start; what the environment already sets wins. */
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'dotenv-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('when a .env file exists, then its variables fill what the environment leaves unset, and set ones win, even when empty', () => {
  writeFileSync(
    join(dir, '.env'),
    '# local\nPORT=9001\nLOG_LEVEL=debug\nMAIL_FROM="Desk <desk@broker.test>"\nSMTP_URL=smtp://file:1025\n',
  );
  const env: NodeJS.ProcessEnv = { PORT: '9100', SMTP_URL: '' };
  expect(applyDotEnv(env, dir).sort()).toEqual(['LOG_LEVEL', 'MAIL_FROM']);
  expect(env).toEqual({ PORT: '9100', SMTP_URL: '', LOG_LEVEL: 'debug', MAIL_FROM: 'Desk <desk@broker.test>' });
  const config = loadConfig(env as Record<string, string>);
  expect([config.port, config.logLevel, config.mailFrom, config.smtpUrl]).toEqual([
    9100,
    'debug',
    'Desk <desk@broker.test>',
    undefined,
  ]);
});

test('when there is no .env file, then nothing changes', () => {
  const env: NodeJS.ProcessEnv = { PORT: '1' };
  expect(applyDotEnv(env, dir)).toEqual([]);
  expect(env).toEqual({ PORT: '1' });
});

test('when .env.example is copied to .env, then it names only variables the service reads and starts a valid configuration', () => {
  const text = readFileSync(join(__dirname, '..', '..', '.env.example'), 'utf8');
  const names = [...text.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);
  expect(names.length).toBeGreaterThan(5);
  expect(names.filter((n) => !CONFIG_VARIABLES.includes(n))).toEqual([]);
  writeFileSync(join(dir, '.env'), text);
  const env: NodeJS.ProcessEnv = {};
  applyDotEnv(env, dir);
  expect(Object.keys(parseEnv(text)).sort()).toEqual(Object.keys(env).sort());
  expect(() => loadConfig(env as Record<string, string>)).not.toThrow();
});
