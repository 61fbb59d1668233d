import { createHash } from 'node:crypto';
import { z } from 'zod';
import { AREA_FIELD_EXAMPLES, FIELD_EXAMPLES } from './example-values';

/**
 * The example of a request or response body, derived from the zod schema that validates it:
 * a schema's own `.meta({ examples: [...] })` wins; an object is the example of each of its
 * fields, an array one example item. Leaves whose meaning a format already says (a UUID, an
 * instant, an e-mail address, a URL) get one fixed realistic value; an enum or a literal its
 * first value; a field named in the house vocabulary (example-values.ts) its value there. Any
 * other number or text must carry an example of its own: a generated `0`,
 * `"string"` or year 0202 tells a reader nothing, so such a leaf is a gap, reported by path,
 * and the operation gets no example until someone writes one (the OpenAPI example test lists
 * every gap). The example test parses each example with the same schema, so they cannot drift.
 */

export type Io = 'input' | 'output';

export type ExampleResult = { ok: true; value: unknown } | { ok: false; gaps: string[] };

const FORMAT_EXAMPLES: Record<string, unknown> = {
  datetime: '2026-03-12T09:41:27.512Z',
  date: '2026-03-12',
  email: 'anna.keller@example.com',
  url: 'https://crm.example-broker.com/hooks/trading',
};

interface Def {
  type: string;
  [key: string]: unknown;
}

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

function ownExample(schema: z.ZodType): { found: true; value: unknown } | { found: false } {
  const examples = z.globalRegistry.get(schema)?.examples as unknown;
  if (Array.isArray(examples) && examples.length > 0) return { found: true, value: examples[0] };
  if (examples && typeof examples === 'object' && !Array.isArray(examples)) {
    // The OpenAPI form, { name: { value } }: its first entry.
    const first = Object.values(examples as Record<string, { value?: unknown }>)[0];
    if (first && 'value' in first) return { found: true, value: first.value };
  }
  return { found: false };
}

/** A field left out of its object's example (an optional field without an example). */
const OMIT = Symbol('omit');

/**
 * `area` is the operation's tag: a field whose meaning depends on where it is (a `name` is a
 * group's, a role's or a template's) takes the area's value from the vocabulary first.
 */
export function exampleOf(schema: z.ZodType, io: Io, area?: string): ExampleResult {
  const gaps: string[] = [];
  const value = walk(schema, { io, area }, [], gaps);
  return gaps.length || value === OMIT ? { ok: false, gaps } : { ok: true, value };
}

interface Context {
  io: Io;
  area: string | undefined;
}

function walk(schema: z.ZodType, ctx: Context, path: string[], gaps: string[]): unknown {
  const own = ownExample(schema);
  if (own.found) return own.value;
  const def = defOf(schema);
  const inner = (key: string) => walk(def[key] as z.ZodType, ctx, path, gaps);
  switch (def.type) {
    case 'object': {
      const shape = (schema as unknown as z.ZodObject).shape as Record<string, z.ZodType>;
      const entries = Object.entries(shape).map(([key, field]) => [key, walk(field, ctx, [...path, key], gaps)] as const);
      return Object.fromEntries(entries.filter(([, value]) => value !== OMIT));
    }
    case 'array':
      return [walk(def.element as z.ZodType, ctx, [...path, '0'], gaps)];
    case 'optional':
    case 'nullable': {
      // An optional or nullable field without an example of its own is shown absent or null,
      // which is true to life and tells the reader it may be.
      const own = [] as string[];
      const value = walk(def.innerType as z.ZodType, ctx, path, own);
      if (own.length === 0) return value;
      return def.type === 'nullable' ? null : OMIT;
    }
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
    case 'nonoptional':
      return inner('innerType');
    case 'pipe':
      return inner(ctx.io === 'input' ? 'in' : 'out');
    case 'literal':
      return (def.values as unknown[])[0];
    case 'enum':
      return Object.values(def.entries as Record<string, unknown>)[0];
    case 'boolean':
      // A flag is shown off unless the vocabulary says its usual value is on.
      return byName(path, ctx.area)?.boolean ?? false;
    case 'null':
      return null;
    case 'union':
      // The first alternative: a union lists the usual form first.
      return walk((def.options as z.ZodType[])[0]!, ctx, path, gaps);
    case 'string':
    case 'number': {
      const format = (schema as unknown as { _zod: { bag: { format?: string } } })._zod.bag.format ?? (def.format as string);
      if (format === 'uuid' || format === 'guid') return uuidFor(path);
      if (format && format in FORMAT_EXAMPLES) return FORMAT_EXAMPLES[format];
      const named = byName(path, ctx.area)?.[def.type as 'string' | 'number'];
      if (named !== undefined) return named;
      break;
    }
    case 'record':
    case 'unknown':
    case 'any': {
      const named = byName(path, ctx.area)?.value;
      if (named !== undefined) return named;
      break;
    }
  }
  gaps.push(`${path.length ? path.join('.') : '(the whole body)'} (${describeLeaf(def)})`);
  return undefined;
}

/** The vocabulary entry of the field a leaf belongs to (array items take their array's name). */
function byName(path: string[], area: string | undefined) {
  const field = [...path].reverse().find((segment) => !/^\d+$/.test(segment));
  if (field === undefined) return undefined;
  return (area === undefined ? undefined : AREA_FIELD_EXAMPLES[area]?.[field]) ?? FIELD_EXAMPLES[field];
}

/** A UUID of its own per field name (a customer_id and a group_id should not read alike), stable between builds. */
function uuidFor(path: string[]): string {
  const hex = createHash('sha256')
    .update(path.filter((s) => !/^\d+$/.test(s)).join('.') || 'id')
    .digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function describeLeaf(def: Def): string {
  const format = typeof def.format === 'string' ? ` ${def.format}` : '';
  return `${def.type}${format} without an example`;
}
