import type { z } from 'zod';
import type { Location, ValidationItem } from '../../platform/errors';

/**
 * Translates zod issues into Pydantic v2 error types and messages, so a client written
 * for a FastAPI service parses our 422 bodies unchanged.
 */

type Issue = z.core.$ZodIssue;

const TYPE_BY_EXPECTED: Record<string, [string, string]> = {
  string: ['string_type', 'Input should be a valid string'],
  number: ['float_type', 'Input should be a valid number'],
  int: ['int_type', 'Input should be a valid integer'],
  boolean: ['bool_type', 'Input should be a valid boolean'],
  object: ['dict_type', 'Input should be a valid dictionary or object'],
  record: ['dict_type', 'Input should be a valid dictionary'],
  array: ['list_type', 'Input should be a valid list'],
  tuple: ['list_type', 'Input should be a valid list'],
  date: ['datetime_type', 'Input should be a valid datetime'],
  null: ['none_required', 'Input should be None'],
};

const FORMAT_TYPES: Record<string, [string, string]> = {
  uuid: ['uuid_parsing', 'Input should be a valid UUID'],
  guid: ['uuid_parsing', 'Input should be a valid UUID'],
  url: ['url_parsing', 'Input should be a valid URL'],
  email: ['value_error', 'value is not a valid email address'],
  datetime: ['datetime_from_date_parsing', 'Input should be a valid datetime'],
  date: ['date_from_datetime_parsing', 'Input should be a valid date'],
  regex: ['string_pattern_mismatch', 'String should match pattern'],
};

function plural(n: number | bigint, word: string): string {
  return `${n} ${word}${Number(n) === 1 ? '' : 's'}`;
}

function describe(issue: Issue, root: z.ZodType, absent: boolean): [string, string] {
  // An absent field is `missing` whatever its schema: zod reports a missing enum or literal
  // as invalid_value, and a missing coerced query number as NaN (not undefined), so the raw
  // input decides, not issue.input.
  if (absent && (issue.code === 'invalid_type' || issue.code === 'invalid_value')) return ['missing', 'Field required'];
  switch (issue.code) {
    case 'invalid_type': {
      if (issue.input === undefined) return ['missing', 'Field required'];
      // zod reports a string given to z.int() as "expected number"; Pydantic says int_type.
      const expected = issue.expected === 'number' && isIntegerSchema(leafSchema(root, issue.path)) ? 'int' : issue.expected;
      return TYPE_BY_EXPECTED[expected] ?? ['value_error', issue.message];
    }
    case 'too_small': {
      const n = issue.minimum;
      if (issue.origin === 'string') return ['string_too_short', `String should have at least ${plural(n, 'character')}`];
      if (issue.origin === 'array' || issue.origin === 'set')
        return ['too_short', `List should have at least ${plural(n, 'item')} after validation`];
      return issue.inclusive
        ? ['greater_than_equal', `Input should be greater than or equal to ${n}`]
        : ['greater_than', `Input should be greater than ${n}`];
    }
    case 'too_big': {
      const n = issue.maximum;
      if (issue.origin === 'string') return ['string_too_long', `String should have at most ${plural(n, 'character')}`];
      if (issue.origin === 'array' || issue.origin === 'set')
        return ['too_long', `List should have at most ${plural(n, 'item')} after validation`];
      return issue.inclusive
        ? ['less_than_equal', `Input should be less than or equal to ${n}`]
        : ['less_than', `Input should be less than ${n}`];
    }
    case 'invalid_value': {
      const options = issue.values.map((v) => (typeof v === 'string' ? `'${v}'` : String(v)));
      const list = options.length > 1 ? `${options.slice(0, -1).join(', ')} or ${options[options.length - 1]}` : options[0];
      return ['literal_error', `Input should be ${list}`];
    }
    case 'invalid_format': {
      const [type, msg] = FORMAT_TYPES[issue.format] ?? ['value_error', issue.message];
      if (issue.format === 'regex' && issue.pattern) return [type, `${msg} '${issue.pattern}'`];
      return [type, msg];
    }
    case 'not_multiple_of':
      return ['multiple_of', `Input should be a multiple of ${issue.divisor}`];
    case 'custom': {
      // Refinements may name their Pydantic type: refine(fn, { params: { type: 'url_parsing' } }).
      const type = typeof issue.params?.type === 'string' ? issue.params.type : 'value_error';
      return [type, issue.message];
    }
    default:
      return ['value_error', issue.message];
  }
}

/** The innermost issue of a union that failed on every branch: the branch that got furthest. */
function flattenUnion(issue: Issue): Issue[] {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return [issue];
  const deepest = [...issue.errors].sort((a, b) => maxDepth(b) - maxDepth(a))[0] ?? [];
  return deepest.flatMap((inner) => flattenUnion({ ...inner, path: [...issue.path, ...inner.path] } as Issue));
}

function maxDepth(issues: Issue[]): number {
  return Math.max(0, ...issues.map((i) => i.path.length + (i.code === 'invalid_type' ? 0 : 0.5)));
}

/** The raw input at `path`, or undefined when any step of it is absent. */
function rawAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || !Object.prototype.hasOwnProperty.call(value, key)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** `input` is the raw value that was parsed (body, query or path params), to tell absent fields apart. */
export function zodIssuesToItems(where: Location, issues: readonly Issue[], root: z.ZodType, input?: unknown): ValidationItem[] {
  return issues.flatMap(flattenUnion).flatMap((issue): ValidationItem[] => {
    const path = issue.path.map((p) => (typeof p === 'number' ? p : String(p)));
    // A strict object (z.strictObject) reports its unknown keys in one issue; Pydantic points
    // at each of them, so a client sees which field it mistyped.
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((key) => ({
        loc: [where, ...path, key],
        msg: 'Extra inputs are not permitted',
        type: 'extra_forbidden',
      }));
    const absent = input !== undefined && rawAt(input, issue.path) === undefined;
    const [type, msg] = describe(issue, root, absent);
    return [{ loc: [where, ...path], msg, type }];
  });
}

type AnyDef = {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  valueType?: z.ZodType;
  format?: string;
  checks?: Array<{ _zod: { def: { format?: string } } }>;
};

function defOf(schema: z.ZodType): AnyDef {
  return (schema as unknown as { _zod: { def: AnyDef } })._zod.def;
}

/** Looks through optional, nullable, default and pipe wrappers to the schema that checks the value. */
function unwrap(schema: z.ZodType): z.ZodType {
  for (;;) {
    const def = defOf(schema);
    if (def.innerType) schema = def.innerType;
    else if (def.type === 'pipe' && def.in) schema = def.in;
    else return schema;
  }
}

/** The schema that validated the value at `path`, or undefined where the walk cannot follow. */
function leafSchema(root: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined {
  let schema: z.ZodType | undefined = unwrap(root);
  for (const key of path) {
    const def = defOf(schema);
    if (def.type === 'object') schema = def.shape?.[String(key)];
    else if (def.type === 'array') schema = def.element;
    else if (def.type === 'record') schema = def.valueType;
    else return undefined;
    if (!schema) return undefined;
    schema = unwrap(schema);
  }
  return schema;
}

const INTEGER_FORMATS = new Set(['safeint', 'int32', 'uint32']);

function isIntegerSchema(schema: z.ZodType | undefined): boolean {
  if (!schema) return false;
  const def = defOf(schema);
  if (def.type !== 'number') return false;
  return INTEGER_FORMATS.has(def.format ?? '') || (def.checks ?? []).some((c) => INTEGER_FORMATS.has(c._zod.def.format ?? ''));
}
