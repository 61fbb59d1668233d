import { z } from 'zod';
import type { RouteSpec } from '../http/route';

/**
 * Builds the OpenAPI 3.1 document from the route table: the same zod schemas that
 * validate requests describe them here, so the document cannot drift from the code.
 */

type JsonSchema = Record<string, unknown>;

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
          loc: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
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

export function buildOpenApiDocument(
  routes: RouteSpec[],
  info: { title: string; version: string; description: string },
): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const responses: Record<string, JsonSchema> = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      responses[status] = {
        description: spec.description,
        ...(spec.schema ? { content: { 'application/json': { schema: schemaOf(spec.schema, 'output') } } } : {}),
      };
    }
    if (route.body || route.query || route.params) {
      responses['422'] ??= {
        description: 'Validation failed',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ValidationError' } } },
      };
    }
    responses.default ??= {
      description: 'Error',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };

    const operation: JsonSchema = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: route.tags,
      parameters: [...parametersOf('path', route.params), ...parametersOf('query', route.query)],
      responses,
      ...(route.access.kind === 'public' ? { security: [] } : { 'x-access': route.access }),
    };
    if (route.body) {
      operation.requestBody = { required: true, content: { 'application/json': { schema: schemaOf(route.body, 'input') } } };
    }
    (paths[route.path] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info,
    paths,
    components: {
      schemas: { ValidationError: VALIDATION_ERROR, Error: ERROR },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    },
    security: [{ bearer: [] }],
  };
}
