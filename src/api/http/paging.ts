import { z } from 'zod';

/** `page` (from 1) and `page_size` query parameters, shared by every paged list. */
export function pageQuery(maxPageSize = 100, defaultPageSize = 20) {
  return {
    page: z.coerce.number().int().min(1).max(1_000_000).default(1).describe('Page number, from 1'),
    page_size: z.coerce
      .number()
      .int()
      .min(1)
      .max(maxPageSize)
      .default(defaultPageSize)
      .describe(`Items per page, 1 to ${maxPageSize}`),
  };
}

export function pageSchema<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    page: z.int().meta({ examples: [1] }),
    page_size: z.int().meta({ examples: [20] }),
    total: z.int().meta({ examples: [1] }),
  });
}
