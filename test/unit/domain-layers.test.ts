import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/**
 * The domain's layering, type-only imports included. The lint rule (import-x/no-cycle) skips
 * `import type`, which does nothing at run time but still ties two modules together: a type
 * cycle today is a value cycle after the next refactor. So this reads every relative import
 * of src/domain, as written, and asserts no cycle and no import of the tiers above.
 */
const root = join(__dirname, '..', '..');
const domain = join(root, 'src', 'domain');
const ABOVE = ['src/api/', 'src/workers/', 'src/runtime', 'src/main', 'src/config/', 'src/app-services', 'src/policy'];

function filesOf(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? filesOf(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}

const IMPORT = /(?:import|export)\s[^'";]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(file: string): string[] {
  const found: string[] = [];
  for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
    const spec = m[1] ?? m[2]!;
    if (!spec.startsWith('.')) continue;
    const base = normalize(join(dirname(file), spec));
    const target = [`${base}.ts`, join(base, 'index.ts')].find((c) => existsSync(c));
    if (target) found.push(target);
  }
  return found;
}

const files = filesOf(domain);
const edges = new Map(files.map((f) => [f, importsOf(f)]));
const rel = (f: string) => relative(root, f).split('\\').join('/');

/** Every cycle's members, by a depth-first walk that reports each back edge's loop. */
function cycles(): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (f: string) => {
    state.set(f, 'open');
    path.push(f);
    for (const t of edges.get(f) ?? []) {
      if (!t.startsWith(domain)) continue;
      if (state.get(t) === 'open') found.push(path.slice(path.indexOf(t)).map(rel));
      else if (!state.has(t)) visit(t);
    }
    path.pop();
    state.set(f, 'done');
  };
  for (const f of files) if (!state.has(f)) visit(f);
  return found;
}

test('when src/domain is read, type-only imports included, then no module takes part in an import cycle', () => {
  // The walk really reads the domain's imports (a broken pattern would find none and pass).
  expect(files.length).toBeGreaterThan(50);
  expect([...edges.values()].flat().filter((t) => t.startsWith(domain)).length).toBeGreaterThan(100);
  expect(cycles()).toEqual([]);
});

test('when src/domain is read, then no module imports a tier above the domain', () => {
  const upward = files.flatMap((f) =>
    (edges.get(f) ?? []).filter((t) => ABOVE.some((a) => rel(t).startsWith(a))).map((t) => `${rel(f)} -> ${rel(t)}`),
  );
  expect(upward).toEqual([]);
});

test('when a type-only cycle is planted, then the walk finds it (the check can fail)', () => {
  const a = join(domain, 'planted-a.ts');
  const b = join(domain, 'planted-b.ts');
  edges.set(a, [b]);
  edges.set(b, [a]);
  files.push(a, b);
  try {
    expect(cycles()).toEqual([['src/domain/planted-a.ts', 'src/domain/planted-b.ts']]);
  } finally {
    files.splice(files.indexOf(a), 2);
    edges.delete(a);
    edges.delete(b);
  }
});
