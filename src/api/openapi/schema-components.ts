import { z } from 'zod';
import type { Io } from './examples';

export type JsonSchema = Record<string, unknown>;

const OPTIONS = { unrepresentable: 'any', target: 'draft-2020-12' } as const;
const PREFIX = '#/components/schemas/';

/**
 * The document's named schemas. A zod schema named with `.meta({ id: 'Order' })` becomes
 * `components.schemas.Order` and every place that uses it a `$ref`, so a generated client
 * has one `Order` type. zod writes a named schema into `$defs` of each conversion; this moves
 * them into the components. A named schema that reads differently as a request (defaults
 * optional, transforms' input side) than as an answer is named `<id>Input` on the request
 * side. Two different schemas under one name are refused: the document would lie for one.
 */
export class SchemaComponents {
  readonly schemas: Record<string, JsonSchema> = {};
  private readonly texts = new Map<string, string>();

  /** The JSON schema of `schema` as this document writes it: named parts referenced. */
  convert(schema: z.ZodType, io: Io): JsonSchema {
    const named = new Map<string, z.ZodType>();
    const json = z.toJSONSchema(schema, {
      ...OPTIONS,
      io,
      override: (ctx) => {
        const id = z.globalRegistry.get(ctx.zodSchema)?.id;
        if (typeof id === 'string') named.set(id, ctx.zodSchema as unknown as z.ZodType);
      },
    }) as JsonSchema;
    const { $schema: _ignored, $defs, ...root } = json;
    const defs = ($defs ?? {}) as Record<string, JsonSchema>;
    const names = new Map<string, string>();
    for (const id of Object.keys(defs)) {
      const source = named.get(id);
      if (!source) throw new Error(`the OpenAPI document cannot name ${id}: give the schema .meta({ id }) or none`);
      names.set(id, io === 'input' && !readsAlike(source) ? `${id}Input` : id);
    }
    const rewrite = (value: JsonSchema): JsonSchema => {
      let text = JSON.stringify(value);
      for (const [id, name] of names) text = text.split(`"#/$defs/${id}"`).join(JSON.stringify(PREFIX + name));
      return JSON.parse(text) as JsonSchema;
    };
    for (const [id, def] of Object.entries(defs)) this.add(names.get(id)!, rewrite(def));
    return rewrite(root);
  }

  /** Puts `schema` into the components under `name` and answers the reference to it. */
  add(name: string, schema: JsonSchema): JsonSchema {
    const text = JSON.stringify(schema);
    const known = this.texts.get(name);
    if (known !== undefined && known !== text)
      throw new Error(`two different schemas are named ${name} in the OpenAPI document: rename one`);
    this.texts.set(name, text);
    this.schemas[name] = schema;
    return { $ref: PREFIX + name };
  }

  has(name: string): boolean {
    return this.texts.has(name);
  }
}

function readsAlike(schema: z.ZodType): boolean {
  const input = JSON.stringify(z.toJSONSchema(schema, { ...OPTIONS, io: 'input' }));
  return input === JSON.stringify(z.toJSONSchema(schema, { ...OPTIONS, io: 'output' }));
}
