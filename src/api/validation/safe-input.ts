import type { Location, ValidationItem } from '../../platform/errors';

/**
 * One rule for every string a client sends, in any field, key, query or path parameter,
 * checked before the route's own schema: no NUL character (Postgres text and jsonb cannot
 * hold one, and C libraries stop reading at it) and no lone UTF-16 surrogate (not Unicode at
 * all: it would be stored silently as U+FFFD). Values nested deeper than MAX_DEPTH are
 * refused as well: nothing in this API nests that deep, and walking them costs stack.
 * The walk is iterative, so a hostile depth cannot overflow the stack here.
 */
export const MAX_DEPTH = 32;

// A high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function textProblem(value: string): { msg: string; type: string } | undefined {
  if (value.includes('\u0000')) return { msg: 'String should not contain NUL characters', type: 'string_unicode' };
  if (LONE_SURROGATE.test(value))
    return { msg: 'Input should be a valid string, unable to parse raw data as a unicode string', type: 'string_unicode' };
  return undefined;
}

/** Every unsafe string (or over-deep value) in `value`, as 422 items located under `where`. */
export function unsafeInput(where: Location, value: unknown): ValidationItem[] {
  const items: ValidationItem[] = [];
  const stack: Array<{ value: unknown; path: Array<string | number> }> = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!;
    if (typeof current === 'string') {
      const problem = textProblem(current);
      if (problem) items.push({ loc: [where, ...path], ...problem });
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (path.length >= MAX_DEPTH) {
      items.push({ loc: [where, ...path], msg: `Value should be nested at most ${MAX_DEPTH} levels deep`, type: 'value_error' });
      continue;
    }
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], path: [...path, i] });
      continue;
    }
    const keys = Object.keys(current);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      const problem = textProblem(key);
      if (problem) items.push({ loc: [where, ...path, key], ...problem });
      else stack.push({ value: (current as Record<string, unknown>)[key], path: [...path, key] });
    }
  }
  return items;
}
