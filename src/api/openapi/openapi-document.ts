import { z } from 'zod';
import type { Access, RouteSpec } from '../http/route';
import { TAGS, TAG_GROUPS } from './tags';

/**
 * Builds the OpenAPI 3.1 document from the route table: the same zod schemas that
 * validate requests describe them here, so the document cannot drift from the code.
 * The error answers are generated from what a route declares (its access, its inputs),
 * so a new route cannot forget to document 401, 403, 404 or 422.
 */

type JsonSchema = Record<string, unknown>;

export const API_VERSION = '1.0.0';

export const API_INFO = {
  title: 'Trading Infrastructure API',
  version: API_VERSION,
  description:
    'Back-office API of a forex/CFD broker for staff, customers and integrators. Errors follow one format: 422 ' +
    '`{"detail": [{"loc", "msg", "type"}]}` with Pydantic v2 type names for validation, `{"detail", "code"}` for everything else.',
  license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
  contact: { name: 'Trading platform team' },
};

const VALIDATION_ERROR = {
  type: 'object',
  required: ['detail'],
  properties: {
    detail: {
      type: 'array',
      items: {
        type: 'object',
        required: ['loc', 'msg', 'type'],
        properties: {
          loc: {
            type: 'array',
            items: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
            description: 'Where the value was ("body", "query", "path" or "header"), then the field path',
          },
          msg: { type: 'string' },
          type: { type: 'string', description: 'Pydantic v2 error type name, e.g. missing, string_too_long' },
        },
      },
    },
  },
};

const ERROR = {
  type: 'object',
  required: ['detail', 'code'],
  properties: {
    detail: { type: 'string', description: 'A human sentence' },
    code: { type: 'string', description: 'UPPER_SNAKE_CASE code, e.g. NOT_FOUND, NAME_TAKEN' },
  },
};

const errorContent = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };

/** The answers every route of a kind can give, referenced from each operation. */
const SHARED_RESPONSES = {
  Unauthenticated: {
    description: 'UNAUTHENTICATED: the token is missing, malformed, expired or revoked',
    headers: { 'WWW-Authenticate': { description: 'Always `Bearer`', schema: { type: 'string' } } },
    content: errorContent,
  },
  NotFound: { description: 'NOT_FOUND: no such object, or it is not yours to see', content: errorContent },
  ValidationFailed: {
    description: 'Validation failed: each entry points at a field',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ValidationError' } } },
  },
  RateLimited: {
    description: 'RATE_LIMITED: too many attempts; wait for Retry-After seconds',
    headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } },
    content: errorContent,
  },
  MalformedRequest: {
    description:
      'The request itself could not be read, on any route: a body that is not JSON (422 json_invalid), too large ' +
      '(413 PAYLOAD_TOO_LARGE), in an encoding the service does not take (415 UNSUPPORTED_MEDIA_TYPE), or a path ' +
      'that cannot be decoded (400 BAD_REQUEST)',
    content: {
      'application/json': {
        schema: { anyOf: [{ $ref: '#/components/schemas/Error' }, { $ref: '#/components/schemas/ValidationError' }] },
      },
    },
  },
  Unexpected: {
    description: 'INTERNAL (500, naming only the request id) or QUEUE_UNAVAILABLE (503, nothing was changed; try again)',
    content: errorContent,
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

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    target: 'draft-2020-12',
  }) as JsonSchema;
  return rest;
}

function parametersOf(where: 'path' | 'query', schema: z.ZodType | undefined): JsonSchema[] {
  if (!schema) return [];
  const json = schemaOf(schema, 'input');
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema: s,
    ...(typeof s.description === 'string' ? { description: s.description } : {}),
  }));
}

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: the same key and body from the same caller within 24 hours replays the first answer ' +
    '(Idempotent-Replayed: true); another body is 422 at ["header", "Idempotency-Key"]; while the first is in flight, 409.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
};

function responsesOf(route: RouteSpec): Record<string, JsonSchema> {
  const responses: Record<string, JsonSchema> = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    const isError = Number(status) >= 400;
    const content = spec.schema
      ? { 'application/json': { schema: schemaOf(spec.schema, 'output') } }
      : isError
        ? errorContent
        : undefined;
    responses[status] = { description: spec.description, ...(content ? { content } : {}) };
  }
  if (route.access.kind !== 'public') responses['401'] ??= ref('Unauthenticated');
  const forbidden = forbiddenOf(route.access);
  if (forbidden) responses['403'] ??= { description: forbidden, content: errorContent };
  // A route that names an object in its path answers 404 when there is none (or not the caller's).
  if (route.params) responses['404'] ??= ref('NotFound');
  if (route.idempotent)
    responses['409'] ??= {
      description: 'IDEMPOTENCY_KEY_IN_USE: the first request with this key is still running',
      content: errorContent,
    };
  if (route.body || route.query || route.params || route.idempotent) responses['422'] ??= ref('ValidationFailed');
  // A throttled route says so by declaring 429; the answer always carries Retry-After.
  if (route.responses[429]) responses['429'] = { ...ref('RateLimited'), description: route.responses[429].description };
  responses['4XX'] ??= ref('MalformedRequest');
  responses.default ??= ref('Unexpected');
  return responses;
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
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const description = [route.description, accessNote(route.access)].filter(Boolean).join('\n\n');
    const operation: JsonSchema = {
      operationId: route.operationId,
      summary: route.summary,
      description,
      tags: route.tags,
      parameters: [
        ...parametersOf('path', route.params),
        ...parametersOf('query', route.query),
        ...(route.idempotent ? [IDEMPOTENCY_KEY] : []),
      ],
      responses: responsesOf(route),
      security: securityOf(route.access),
      'x-access': route.access,
    };
    if (route.body) {
      operation.requestBody = {
        required: !route.body.isOptional(),
        content: { 'application/json': { schema: schemaOf(route.body, 'input') } },
      };
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
    components: {
      schemas: { ValidationError: VALIDATION_ERROR, Error: ERROR },
      responses: SHARED_RESPONSES,
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}
