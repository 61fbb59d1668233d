import { replyProblems } from '../../src/api/http/response-contract';
import type { RouteSpec } from '../../src/api/http/route';
import { ErrorSchema, ValidationErrorSchema } from '../../src/api/openapi/error-schemas';
import { exampleOf } from '../../src/api/openapi/examples';
import { buildOpenApiDocument } from '../../src/api/openapi/openapi-document';
import { ROUTES } from '../../src/api/routes';

const doc = buildOpenApiDocument(ROUTES) as any;
const name = (r: RouteSpec) => `${r.method.toUpperCase()} ${r.path}`;

/** A response as the operation lists it, a shared one ($ref) resolved. */
function resolve(response: any): any {
  const ref: string | undefined = response.$ref;
  return ref ? doc.components.responses[ref.replace('#/components/responses/', '')] : response;
}

const HOW =
  'add .meta({ examples: [...] }) to the schema (or to the field named), or to the route body; see src/api/openapi/examples.ts';

describe('the examples of the OpenAPI document', () => {
  test('when the document is generated, then every request body and every answer with content has an example', () => {
    const missing: string[] = [];
    for (const route of ROUTES) {
      const op = doc.paths[route.path][route.method];
      if (op.requestBody && bodyExample(op.requestBody) === undefined) {
        const gaps = route.body ? exampleGapsOf(route.body, 'input') : [];
        missing.push(`${name(route)} (${route.operationId}) request body: no example; gaps: ${gaps.join(', ')}`);
      }
      for (const [status, listed] of Object.entries(op.responses)) {
        const content = resolve(listed).content?.['application/json'];
        if (content && content.example === undefined) {
          const schema = route.responses[Number(status)]?.schema;
          const gaps = schema ? exampleGapsOf(schema, 'output') : [];
          missing.push(`${name(route)} (${route.operationId}) answer ${status}: no example; gaps: ${gaps.join(', ')}`);
        }
      }
    }
    if (missing.length) throw new Error(`${missing.length} bodies lack an example (${HOW}):\n${missing.join('\n')}`);
  });

  test('when a request body has an example, then its own zod schema accepts it and it names no field the schema lacks', () => {
    const problems: string[] = [];
    for (const route of ROUTES) {
      if (!route.body) continue;
      const example = doc.paths[route.path][route.method].requestBody.content['application/json'].example;
      if (example === undefined) continue;
      const parsed = route.body.safeParse(example);
      if (!parsed.success) {
        problems.push(
          `${name(route)} request body: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
        );
        continue;
      }
      const stray = Object.keys(example).filter((key) => !(key in (parsed.data as object)));
      if (stray.length) problems.push(`${name(route)} request body: ${stray.join(', ')} not in the schema`);
    }
    expect(problems).toEqual([]);
  });

  test('when an answer has an example, then it passes the same contract check as a real answer', () => {
    const problems: string[] = [];
    for (const route of ROUTES) {
      const op = doc.paths[route.path][route.method];
      for (const [status, listed] of Object.entries(op.responses)) {
        const content = resolve(listed).content?.['application/json'];
        if (content?.example === undefined) continue;
        const where = `${name(route)} answer ${status}`;
        if (route.responses[Number(status)]?.schema) {
          for (const p of replyProblems(route, Number(status), content.example)) problems.push(`${where}: ${p}`);
        } else {
          // An error answer: Error, ValidationError, or either (the malformed-request answer).
          const fits = [ErrorSchema, ValidationErrorSchema].some((s) => s.safeParse(content.example).success);
          if (!fits) problems.push(`${where}: the example is neither an Error nor a ValidationError`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  test('when an answer holds objects of the domain, then each is a named component referenced by $ref', () => {
    const inline: string[] = [];
    const walk = (schema: any, path: string, top: boolean): void => {
      if (!schema || typeof schema !== 'object' || schema.$ref) return;
      if (schema.type === 'object' && !top && schema.properties) inline.push(path);
      for (const [key, sub] of Object.entries<any>(schema.properties ?? {})) walk(sub, `${path}.${key}`, false);
      if (schema.items) walk(schema.items, `${path}[]`, false);
      for (const sub of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) walk(sub, path, top);
    };
    for (const route of ROUTES) {
      const op = doc.paths[route.path][route.method];
      for (const [status, listed] of Object.entries<any>(op.responses)) {
        if (!/^2/.test(status)) continue;
        walk(listed.content?.['application/json']?.schema, `${name(route)} answer ${status}`, true);
      }
    }
    if (inline.length)
      throw new Error(
        `${inline.length} answers hold an unnamed object (name its schema in src/api/openapi/component-names.ts, ` +
          `or give it .meta({ id })):\n${inline.join('\n')}`,
      );
  });

  test('when examples show tickets, logins, prices and dates, then they are realistic: none negative, no year before 2026', () => {
    const text = JSON.stringify(doc.paths);
    const years = [...text.matchAll(/"(\d{4})-\d\d-\d\dT/g)].map((m) => Number(m[1]));
    expect(years.filter((y) => y < 2026)).toEqual([]);
    const examples = ROUTES.flatMap((route) => {
      const op = doc.paths[route.path][route.method];
      const bodies = [op.requestBody && bodyExample(op.requestBody)];
      for (const listed of Object.values(op.responses)) bodies.push(resolve(listed).content?.['application/json']?.example);
      return bodies.filter((b) => b !== undefined);
    });
    // Swaps and profits may be negative; identifiers, volumes and prices never are.
    const negative = JSON.stringify(examples).match(/"(login|order|ticket|volume|[a-z_]*price|bid|ask)":-\d/g) ?? [];
    expect(negative).toEqual([]);
  });

  test('when an operation moves an object to a state, then its example shows the object in that state', () => {
    const leaves: Record<string, string> = {
      openOrder: 'open',
      closeOrder: 'closed',
      cancelPendingOrder: 'cancelled',
      approveDocument: 'approved',
      rejectDocument: 'rejected',
      requestWithdrawal: 'pending',
      rejectWithdrawal: 'rejected',
      grantBonus: 'active',
      cancelBonus: 'cancelled',
      startPropChallenge: 'active',
      requestPayout: 'pending',
      rejectPayout: 'rejected',
      createDepositIntent: 'pending',
      cancelMyDeposit: 'cancelled',
      approveDeposit: 'completed',
      rejectDeposit: 'failed',
      resolveFraudCase: 'resolved',
    };
    const shown: Record<string, unknown> = {};
    for (const route of ROUTES.filter((r) => r.operationId in leaves)) {
      const op = doc.paths[route.path][route.method];
      const status = Object.keys(op.responses).find((s) => /^2/.test(s))!;
      shown[route.operationId] = resolve(op.responses[status]).content['application/json'].example.status;
    }
    expect(shown).toEqual(leaves);
  });
});

function exampleGapsOf(schema: Parameters<typeof exampleOf>[0], io: 'input' | 'output'): string[] {
  const result = exampleOf(schema, io);
  return result.ok ? [] : result.gaps;
}

/** A request body's example, whatever its media type (JSON, or a multipart upload's form). */
function bodyExample(body: { content: Record<string, { example?: unknown }> }): unknown {
  return Object.values(body.content)[0]?.example;
}
