import type { RouteSpec } from './route';

/**
 * What is wrong with an answer measured against the route's declared responses: nothing
 * (an empty list), or one sentence per problem. The body is checked as the client receives
 * it, after a JSON round trip (a Date has become text, an undefined field has gone), and
 * must match the schema exactly: the document promises `additionalProperties: false` for
 * every response object, so a key the schema does not name is a problem too.
 */
export function replyProblems(route: RouteSpec, status: number, body: unknown): string[] {
  const declared = route.responses[status];
  if (!declared) {
    const statuses = Object.keys(route.responses).join(', ') || 'none';
    return [`status ${status} is not declared (the route declares ${statuses})`];
  }
  if (body === undefined) return declared.schema ? ['the answer has no body, but the route declares one'] : [];
  if (!declared.schema) return ['the answer has a body, but the route declares none for this status'];

  const wire: unknown = JSON.parse(JSON.stringify(body));
  const parsed = declared.schema.safeParse(wire);
  if (!parsed.success) return parsed.error.issues.map((i) => `${pathText(i.path)}: ${i.message} (${i.code})`);
  return strayKeys(wire, parsed.data, []).map((path) => `${pathText(path)}: not in the schema`);
}

/**
 * Keys of `wire` that parsing dropped: zod objects strip what they do not name, so a key
 * present in the answer and absent from the parsed value is one the schema does not know.
 */
function strayKeys(wire: unknown, parsed: unknown, path: PropertyKey[]): PropertyKey[][] {
  if (Array.isArray(wire) && Array.isArray(parsed)) return wire.flatMap((w, i) => strayKeys(w, parsed[i], [...path, i]));
  if (!isPlainObject(wire) || !isPlainObject(parsed)) return [];
  return Object.keys(wire).flatMap((key) =>
    key in parsed ? strayKeys(wire[key], parsed[key], [...path, key]) : [[...path, key]],
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function pathText(path: PropertyKey[]): string {
  return path.length ? path.map(String).join('.') : '(body)';
}
