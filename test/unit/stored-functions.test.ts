import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SQL_FUNCTIONS } from '../../src/db/functions/sql-function';

/**
 * Every stored function the schema keeps has a caller: the service's code calls it by name,
 * or a trigger the migrations create executes it. A function nothing calls is still code the
 * next engineer must read, migrate and keep right; it is dropped instead.
 */
const root = join(__dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sources(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}

const files = sources(join(root, 'src')).map((f) => ({ path: relative(root, f), text: readFileSync(f, 'utf8') }));

function uncalled(names: readonly string[], code: Array<{ path: string; text: string }>): string[] {
  const migrations = code.filter((f) => f.path.includes('/migrations/')).map((f) => f.text);
  const service = code.filter((f) => !f.path.includes('/migrations/') && !f.path.includes('/db/functions/')).map((f) => f.text);
  return names.filter((name) => {
    const call = new RegExp(`\\b${name}\\s*\\(`);
    const trigger = new RegExp(`execute\\s+(?:function|procedure)\\s+${name}\\s*\\(`, 'i');
    return !service.some((t) => call.test(t)) && !migrations.some((t) => trigger.test(t));
  });
}

test('when the stored functions are listed, then each is called from src or executed by a trigger', () => {
  expect(SQL_FUNCTIONS.length).toBeGreaterThan(3);
  expect(uncalled(SQL_FUNCTIONS, files)).toEqual([]);
});

test('when a function is only created, never called, then the check names it', () => {
  const planted = [
    {
      path: 'src/db/migrations/M.ts',
      text: 'create function lonely() ...; create trigger t after insert on x execute function fired();',
    },
    { path: 'src/domain/x.ts', text: "const S = 'select used($1)';" },
  ];
  expect(uncalled(['lonely', 'fired', 'used'], planted)).toEqual(['lonely']);
});
