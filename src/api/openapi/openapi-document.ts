import { z } from 'zod';
import type { Access, ResponseSpec, RouteSpec } from '../http/route';
import './component-names';
import { ErrorSchema, ValidationErrorSchema } from './error-schemas';
import { INVALID_ACCESS_TOKEN } from '../../domain/identity/authenticate';
import { exampleOf, type Io } from './examples';
import { SchemaComponents, type JsonSchema } from './schema-components';
import { TAGS, TAG_GROUPS } from './tags';
import { webhooksDocument } from './webhooks-document';

/**
 * Builds the OpenAPI 3.1 document from the route table: the same zod schemas that
 * validate requests describe them here, so the document cannot drift from the code.
 * The error answers are generated from what a route declares (its access, its inputs),
 * so a new route cannot forget to document 401, 403, 404 or 422.
 */

export const API_VERSION = '1.0.0';

export const API_INFO = {
  title: 'Trading Infrastructure API',
  version: API_VERSION,
  description:
    'Back-office API of a forex/CFD broker for staff, customers and integrators. Errors follow one format: 422 ' +
    '`{"detail": [{"loc", "msg", "type"}]}` with Pydantic v2 type names for validation, `{"detail", "code"}` for everything else. ' +
    'An operation without a requestBody takes none: a body sent there is 422 `extra_forbidden` at `["body"]`.',
  license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
  contact: { name: 'Trading platform team' },
};

/** The code a status gives when its description names none. */
const DEFAULT_CODES: Record<string, string> = {
  '400': 'BAD_REQUEST',
  '401': 'UNAUTHENTICATED',
  '403': 'FORBIDDEN',
  '404': 'NOT_FOUND',
  '409': 'CONFLICT',
  '413': 'PAYLOAD_TOO_LARGE',
  '415': 'UNSUPPORTED_MEDIA_TYPE',
  '429': 'RATE_LIMITED',
  '500': 'INTERNAL',
  '503': 'QUEUE_UNAVAILABLE',
};

/**
 * An `Error` answer with an example read from its description, which by convention starts with
 * the code it gives ("ORDER_NOT_OPEN, or PRICE_UNAVAILABLE when ...", "NOT_FOUND: no such ...").
 */
export function errorContent(status: string, description: string): JsonSchema {
  const code =
    /^[A-Z][A-Z0-9_]{3,}\b/.exec(description)?.[0] ??
    /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/.exec(description)?.[0] ??
    DEFAULT_CODES[status] ??
    'CONFLICT';
  // "NOT_FOUND: no such object" reads as its sentence; a bare code (ORDER_NOT_OPEN) as its words.
  const said = new RegExp(`^${code}:\\s*(.+)$`).exec(description)?.[1];
  const sentence = said ?? code.toLowerCase().replace(/_/g, ' ');
  const detail = `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}`.replace(/\.?$/, '.');
  return {
    'application/json': { schema: { $ref: '#/components/schemas/Error' }, example: ErrorSchema.parse({ detail, code }) },
  };
}

const sharedError = (status: string, description: string) => ({ description, content: errorContent(status, description) });

/** The answers every route of a kind can give, referenced from each operation. */
const SHARED_RESPONSES = {
  Unauthenticated: {
    description: 'UNAUTHENTICATED: the token is missing, malformed, expired or revoked',
    // The service's own words for the most common case, not a sentence made up for the document.
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/Error' },
        example: ErrorSchema.parse({ detail: INVALID_ACCESS_TOKEN, code: 'UNAUTHENTICATED' }),
      },
    },
    headers: { 'WWW-Authenticate': { description: 'Always `Bearer`', schema: { type: 'string' } } },
  },
  NotFound: sharedError('404', 'NOT_FOUND: no such object, or it is not yours to see'),
  ValidationFailed: {
    description: 'Validation failed: each entry points at a field',
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/ValidationError' },
        example: ValidationErrorSchema.parse({
          detail: [{ loc: ['body', 'volume'], msg: 'Input should be greater than 0', type: 'greater_than' }],
        }),
      },
    },
  },
  RateLimited: {
    ...sharedError('429', 'RATE_LIMITED: too many attempts; wait for Retry-After seconds'),
    headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } },
  },
  MalformedRequest: {
    description:
      'The request itself could not be read, on any route: a body that is not JSON (422 json_invalid), too large ' +
      '(413 PAYLOAD_TOO_LARGE), of a type other than application/json on a route that takes JSON or in an encoding ' +
      'the service does not take (415 UNSUPPORTED_MEDIA_TYPE), or a path ' +
      'that cannot be decoded (400 BAD_REQUEST)',
    content: {
      'application/json': {
        schema: { anyOf: [{ $ref: '#/components/schemas/Error' }, { $ref: '#/components/schemas/ValidationError' }] },
        example: ErrorSchema.parse({
          detail: 'Unsupported body encoding: send JSON as UTF-8, without Content-Encoding',
          code: 'UNSUPPORTED_MEDIA_TYPE',
        }),
      },
    },
  },
  Unexpected: {
    description: 'INTERNAL (500, naming only the request id) or QUEUE_UNAVAILABLE (503, nothing was changed; try again)',
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/Error' },
        example: ErrorSchema.parse({
          detail: 'Internal error (request id 6c1f9a2e-3b7d-4d0e-8a51-2f4c9e7b1d38)',
          code: 'INTERNAL',
        }),
      },
    },
  },
};

const ref = (name: keyof typeof SHARED_RESPONSES) => ({ $ref: `#/components/responses/${name}` });

const SECURITY_SCHEMES = {
  accessToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'Access token of a staff or customer login session (POST /api/admin/users/login, POST /api/customer/login).',
  },
  apiToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'tia_<opaque>',
    description:
      'Long-lived API token for integrations (POST /api/crm/settings/api-tokens), limited to its scopes, which are permission names.',
  },
};

/**
 * Who may call the operation, as OpenAPI 3.1 security requirements. 3.1 lets a non-OAuth
 * scheme list the roles it needs: here, the permission (for API tokens, the scope).
 */
function securityOf(access: Access): JsonSchema[] {
  switch (access.kind) {
    case 'public':
      return [];
    case 'staff':
    case 'staff_or_customer':
      return [{ accessToken: [access.permission] }, { apiToken: [access.permission] }];
    case 'customer':
    case 'session':
      return [{ accessToken: [] }];
    case 'authenticated':
      return [{ accessToken: [] }, { apiToken: [] }];
  }
}

function forbiddenOf(access: Access): string | undefined {
  switch (access.kind) {
    case 'public':
      return undefined;
    case 'staff':
      return `FORBIDDEN: not a staff or API token, or it lacks the permission ${access.permission}`;
    case 'staff_or_customer':
      return `FORBIDDEN: a staff or API token without the permission ${access.permission} (customers act on their own accounts)`;
    case 'customer':
      return 'FORBIDDEN: not a customer token';
    case 'session':
      return 'FORBIDDEN: an API token (this route belongs to a login session)';
    case 'authenticated':
      return undefined;
  }
}

function accessNote(access: Access): string {
  switch (access.kind) {
    case 'public':
      return 'Access: public.';
    case 'staff':
      return `Access: staff or API token with \`${access.permission}\`.`;
    case 'staff_or_customer':
      return `Access: staff or API token with \`${access.permission}\`, or a customer for its own accounts.`;
    case 'customer':
      return 'Access: customer token.';
    case 'session':
      return 'Access: the token of any login session (staff or customer).';
    case 'authenticated':
      return 'Access: any token: staff, customer or API token, whatever its permissions.';
  }
}

/**
 * A body's media type: its schema and its example (see examples.ts). An operation whose
 * example cannot be derived goes without one; the example test names it and the gap.
 */
const IGNORED_BODY = z
  .object({})
  .meta({ examples: [{}] })
  .describe('This operation reads no body: one may be sent (as `{}`), and any field in it is ignored');

function contentOf(
  schema: z.ZodType,
  io: Io,
  components: SchemaComponents,
  area: string | undefined,
  name?: string,
  patch?: Record<string, unknown>,
): JsonSchema {
  let json = components.convert(schema, io);
  // A request body is named after its operation (OpenOrderRequest), so a client has a type for it.
  if (name && json.$ref === undefined && json.type === 'object') json = components.add(name, json);
  const example = exampleOf(schema, io, area);
  if (!example.ok) return { 'application/json': { schema: json } };
  const value = patch ? { ...(example.value as Record<string, unknown>), ...patch } : example.value;
  return { 'application/json': { schema: json, example: value } };
}

function parametersOf(
  where: 'path' | 'query',
  schema: z.ZodType | undefined,
  components: SchemaComponents,
  area: string | undefined,
): JsonSchema[] {
  if (!schema) return [];
  const json = components.convert(schema, 'input');
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required as string[] | undefined) ?? []);
  const shape = ((schema as z.ZodObject).shape ?? {}) as Record<string, z.ZodType>;
  return Object.entries(properties).map(([name, s]) => {
    // A parameter's example, where one is known: Swagger UI otherwise makes one up from the type.
    const field = shape[name];
    const example = field ? exampleOf(z.object({ [name]: field }), 'input', area) : undefined;
    const value = example?.ok ? (example.value as Record<string, unknown>)[name] : undefined;
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      schema: s,
      ...(typeof s.description === 'string' ? { description: s.description } : {}),
      ...(value !== undefined ? { example: value } : {}),
    };
  });
}

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: the same key and body from the same caller within 24 hours replays the first answer ' +
    '(Idempotent-Replayed: true); another body is 422 at ["header", "Idempotency-Key"]; while the first is in flight, 409.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
  example: 'b5e1c2d4-3f6a-4e8b-9c7d-1a2b3c4d5e6f',
};

/**
 * A server-sent event stream: OpenAPI 3.1 has no schema for the frames of a stream, so the body
 * is text, and `x-events` names each event and the schema of its `data:` (components).
 */
function eventStreamContent(stream: NonNullable<ResponseSpec['eventStream']>, components: SchemaComponents): JsonSchema {
  const events: Record<string, JsonSchema> = {};
  for (const [name, schema] of Object.entries(stream.events)) events[name] = components.convert(schema, 'output');
  return {
    'text/event-stream': {
      schema: { type: 'string', description: 'Frames of `id:`, `event:` and `data:` lines, each frame ending in a blank line' },
      example: stream.example,
      'x-events': events,
    },
  };
}

function responsesOf(route: RouteSpec, components: SchemaComponents): Record<string, JsonSchema> {
  const responses: Record<string, JsonSchema> = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    const isError = Number(status) >= 400;
    const content = spec.eventStream
      ? eventStreamContent(spec.eventStream, components)
      : spec.schema
        ? contentOf(spec.schema, 'output', components, route.tags[0], undefined, spec.example)
        : isError
          ? errorContent(status, spec.description)
          : undefined;
    responses[status] = { description: spec.description, ...(content ? { content } : {}) };
  }
  if (route.access.kind !== 'public') responses['401'] ??= ref('Unauthenticated');
  const forbidden = forbiddenOf(route.access);
  if (forbidden) responses['403'] ??= { description: forbidden, content: errorContent('403', forbidden) };
  // A route that names an object in its path answers 404 when there is none (or not the caller's).
  if (route.params) responses['404'] ??= ref('NotFound');
  if (route.idempotent)
    responses['409'] ??= {
      description: 'IDEMPOTENCY_KEY_IN_USE: the first request with this key is still running',
      content: errorContent('409', 'IDEMPOTENCY_KEY_IN_USE: the first request with this key is still running'),
    };
  // Every route can answer 422: one without a requestBody refuses a body (extra_forbidden at ["body"]).
  responses['422'] ??= ref('ValidationFailed');
  // A throttled route says so by declaring 429; the answer always carries Retry-After.
  if (route.responses[429]) responses['429'] = { ...ref('RateLimited'), description: route.responses[429].description };
  responses['4XX'] ??= ref('MalformedRequest');
  responses.default ??= ref('Unexpected');
  return responses;
}

function requestName(route: RouteSpec): string {
  return `${route.operationId.charAt(0).toUpperCase()}${route.operationId.slice(1)}Request`;
}

/**
 * What would make the document a poor input for client generators: duplicate or badly
 * named operation ids, undeclared tags. The route-table test requires none.
 */
export function documentationProblems(routes: RouteSpec[]): string[] {
  const problems: string[] = [];
  const ids = new Set<string>();
  for (const route of routes) {
    const name = `${route.method.toUpperCase()} ${route.path}`;
    if (ids.has(route.operationId)) problems.push(`${name}: operationId ${route.operationId} is used twice`);
    ids.add(route.operationId);
    if (!/^[a-z]+[A-Z][A-Za-z]*$/.test(route.operationId))
      problems.push(`${name}: operationId ${route.operationId} should be a camelCase verb phrase (listGroups, createOrder)`);
    for (const tag of route.tags) if (!(tag in TAGS)) problems.push(`${name}: tag "${tag}" is not declared in openapi/tags.ts`);
  }
  return problems;
}

export function buildOpenApiDocument(routes: RouteSpec[], info: JsonSchema = API_INFO): JsonSchema {
  const components = new SchemaComponents();
  components.convert(ErrorSchema, 'output');
  components.convert(ValidationErrorSchema, 'output');
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const description = [route.description, accessNote(route.access)].filter(Boolean).join('\n\n');
    const operation: JsonSchema = {
      operationId: route.operationId,
      summary: route.summary,
      description,
      tags: route.tags,
      parameters: [
        ...parametersOf('path', route.params, components, route.tags[0]),
        ...parametersOf('query', route.query, components, route.tags[0]),
        ...(route.idempotent ? [IDEMPOTENCY_KEY] : []),
      ],
      responses: responsesOf(route, components),
      security: securityOf(route.access),
      'x-access': route.access,
    };
    if (route.requestBody) {
      operation.requestBody = route.requestBody;
    } else if (route.body) {
      operation.requestBody = {
        required: !route.body.isOptional(),
        content: contentOf(route.body, 'input', components, route.tags[0], requestName(route)),
      };
    } else if (route.method === 'post') {
      // Outside the trading and money family (whose bodiless routes refuse any field), a
      // bodiless POST ignores a body as every route ignores unknown fields; the
      // document says so, so a client that always sends `{}` and a validating proxy agree.
      operation.requestBody = { required: false, content: contentOf(IGNORED_BODY, 'input', components, route.tags[0]) };
    }
    (paths[route.path] ??= {})[route.method] = operation;
  }
  const usedTags = new Set(routes.flatMap((r) => r.tags));
  return {
    openapi: '3.1.0',
    info,
    // Relative to the document itself: each broker deployment serves its own /openapi.json.
    servers: [{ url: '/', description: 'This deployment (the host that served this document)' }],
    tags: Object.entries(TAGS)
      .filter(([name]) => usedTags.has(name))
      .map(([name, description]) => ({ name, description })),
    'x-tagGroups': TAG_GROUPS.map((g) => ({ name: g.name, tags: g.tags.filter((t) => usedTags.has(t)) })).filter(
      (g) => g.tags.length > 0,
    ),
    paths,
    // What the service sends to integrators' endpoints (OpenAPI 3.1).
    webhooks: webhooksDocument(),
    components: {
      schemas: components.schemas,
      responses: SHARED_RESPONSES,
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}
