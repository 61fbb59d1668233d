import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/**
 * The areas of src/domain in their documented order (docs/architecture.md, "Areas in
 * layers"), lowest first. An area may import only areas of a lower layer, never one of its
 * own layer or above: that keeps every two areas from knotting together, so a change in a
 * low area (the ledger, prices) can be read and tested without the areas that use it. A new
 * area must be placed here before its first import compiles past this test.
 */
const LAYERS: ReadonlyArray<readonly string[]> = [
  ['audit', 'events', 'idempotency', 'ledger', 'retention'],
  ['compliance', 'groups', 'mail', 'queues', 'secrets', 'webhooks'],
  ['identity', 'instruments'],
  ['prices'],
  ['accounts', 'fraud', 'reports', 'teams'],
  ['bonuses', 'customers', 'eod', 'money', 'orders', 'streams'],
  ['conversations', 'crm', 'engine', 'partners', 'payments', 'prop', 'risk', 'tasks'],
  ['notifications'],
];

const root = join(__dirname, '..', '..');
const domain = join(root, 'src', 'domain');
const IMPORT = /(?:import|export)\s[^'";]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function filesOf(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? filesOf(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}

/** The area of a file under src/domain (its first folder), or undefined for anything else. */
function areaOf(file: string): string | undefined {
  const parts = relative(domain, file).split(/[\\/]/);
  return parts.length >= 2 && parts[0] !== '..' ? parts[0] : undefined;
}

/** Every import from one area into another, type-only ones included, as "from -> to" file pairs. */
function areaImports(
  files: string[],
  read: (f: string) => string,
): Array<{ from: string; to: string; file: string; target: string }> {
  const found = [];
  for (const file of files) {
    for (const m of read(file).matchAll(IMPORT)) {
      const spec = m[1] ?? m[2]!;
      if (!spec.startsWith('.')) continue;
      const base = normalize(join(dirname(file), spec));
      const target = [`${base}.ts`, join(base, 'index.ts')].find((c) => files.includes(c) || existsSync(c));
      const from = areaOf(file);
      const to = target && areaOf(target);
      if (from && to && from !== to) found.push({ from, to, file, target: target! });
    }
  }
  return found;
}

function violations(imports: ReturnType<typeof areaImports>): string[] {
  const layer = new Map(LAYERS.flatMap((areas, i) => areas.map((a) => [a, i] as const)));
  return imports
    .filter(({ from, to }) => layer.get(from)! <= layer.get(to)!)
    .map(({ file, target }) => `${relative(root, file)} -> ${relative(root, target)}`);
}

const files = filesOf(domain);
const imports = areaImports(files, (f) => readFileSync(f, 'utf8'));

test('when the areas of src/domain are listed, then each one has exactly one place in the layers', () => {
  const areas = [...new Set(files.map(areaOf).filter((a): a is string => a !== undefined))].sort();
  expect(LAYERS.flat().sort()).toEqual(areas);
});

test('when src/domain is read, then every import between areas goes to a lower layer', () => {
  // The walk really finds the imports between areas (a broken pattern would find none and pass).
  expect(imports.length).toBeGreaterThan(100);
  expect(violations(imports)).toEqual([]);
});

test('when an area imports one of its own layer or above, then the check names the import', () => {
  const ledger = join(domain, 'ledger', 'planted.ts');
  const orders = join(domain, 'orders', 'planted.ts');
  const money = join(domain, 'money', 'planted.ts');
  const planted: Record<string, string> = {
    [ledger]: "import { closeOrder } from '../orders/planted';",
    [orders]: "import type { Transfer } from '../money/planted';",
    [money]: "import { book } from '../ledger/planted';",
  };
  const found = violations(areaImports(Object.keys(planted), (f) => planted[f]!));
  expect(found).toEqual([
    'src/domain/ledger/planted.ts -> src/domain/orders/planted.ts',
    'src/domain/orders/planted.ts -> src/domain/money/planted.ts',
  ]);
});
