import { z } from 'zod';

/**
 * The API's two error bodies (docs/api-guide.md, Errors), as zod schemas so the document's components
 * and their examples come from the same place as every other schema (and the example test
 * parses the examples with them).
 */

export const ValidationErrorSchema = z
  .object({
    detail: z.array(
      z.object({
        loc: z
          .array(z.union([z.string(), z.int()]))
          .describe('Where the value was ("body", "query", "path" or "header"), then the field path'),
        msg: z.string(),
        type: z.string().describe('Pydantic v2 error type name, e.g. missing, string_too_long'),
      }),
    ),
  })
  .meta({
    id: 'ValidationError',
    examples: [{ detail: [{ loc: ['body', 'volume'], msg: 'Input should be greater than 0', type: 'greater_than' }] }],
  });

export const ErrorSchema = z
  .object({
    detail: z.string().describe('A human sentence'),
    code: z.string().describe('UPPER_SNAKE_CASE code, e.g. NOT_FOUND, NAME_TAKEN'),
  })
  .meta({ id: 'Error', examples: [{ detail: 'Order not found', code: 'NOT_FOUND' }] });
