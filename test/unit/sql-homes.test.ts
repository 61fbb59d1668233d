import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The hand-written statements of every domain area live in its `<area>.queries.ts`, written with
 * named parameters (platform/named-sql.ts). A statement written inline beside the code, with
 * `?` or `$1` placeholders, fails here with where it is.
 */
/** Every area of the domain: each keeps its hand-written statements in its queries module. */
const AREAS = readdirSync(join(__dirname, '..', '..', 'src', 'domain'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

/**
 * Statements that stay where they are, each for a reason: a session setting with no values;
 * the engine's candidate page and the re-seal's per-column statements, whose text is built
 * from code (a symbol filter, each sealed column's table and name) rather than fixed.
 */
const KEPT = new Set([
  'src/domain/risk/preview.ts: set local work_mem',
  'src/domain/engine/candidates.ts: and ticket > ? order by ticket limit',
  'src/domain/secrets/sealed-columns.ts: as sealed from',
  'src/domain/secrets/sealed-columns.ts: set "${c.column}" = ? where id = ?',
  'src/domain/secrets/sealed-columns.ts: count(*)::int as n from (${unions})',
]);

const root = join(__dirname, '..', '..');

function filesOf(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? filesOf(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}

/** The string literal a call of `execute` starts with, if it starts with one. */
const INLINE_STATEMENT = /\.execute(?:<[^()]*?>)?\(\s*(['"`])([\s\S]*?)\1/g;

test('when every domain area is scanned, then no statement is written inline with positional placeholders', () => {
  const found: string[] = [];
  for (const area of AREAS) {
    const dir = join(root, 'src', 'domain', area);
    let files: string[];
    try {
      files = filesOf(dir);
    } catch {
      continue;
    }
    for (const file of files.filter((f) => !f.endsWith('.queries.ts'))) {
      const name = relative(root, file);
      for (const m of readFileSync(file, 'utf8').matchAll(INLINE_STATEMENT)) {
        const text = m[2]!.replace(/\s+/g, ' ').trim();
        if ([...KEPT].some((k) => k.startsWith(`${name}: `) && text.includes(k.slice(name.length + 2)))) continue;
        found.push(`${name}: ${text.slice(0, 80)}`);
      }
    }
  }
  expect(found).toEqual([]);
});

test('when a queries module is read, then its statements use named parameters only', () => {
  const modules = filesOf(join(root, 'src', 'domain')).filter((f) => f.endsWith('.queries.ts'));
  expect(modules.map((f) => relative(join(root, 'src', 'domain'), f))).toEqual(
    expect.arrayContaining([
      'accounts/accounts.queries.ts',
      'events/events.queries.ts',
      'groups/groups.queries.ts',
      'identity/identity.queries.ts',
      'idempotency/idempotency.queries.ts',
      'ledger/ledger.queries.ts',
      'mail/mail.queries.ts',
      'notifications/notifications.queries.ts',
      'risk/risk.queries.ts',
      'secrets/secrets.queries.ts',
      'webhooks/webhooks.queries.ts',
    ]),
  );
  for (const file of modules) {
    const text = readFileSync(file, 'utf8');
    // `?` outside a comment, or `$1`: a positional placeholder.
    const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
    expect({ file: relative(root, file), positional: /\$\d|[^?]\?[^?.]/.test(code.replace(/\?\s*:/g, '')) }).toEqual({
      file: relative(root, file),
      positional: false,
    });
  }
});
