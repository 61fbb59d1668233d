import type { z } from 'zod';

/** Schemas the OpenAPI document names as components: the schema, its component name and an example. */
export type ComponentNames = Array<[z.ZodType, string, unknown?]>;
