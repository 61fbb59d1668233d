import { z } from 'zod';

/**
 * Every paged list pages alike: `page` from 1, `page_size` 1 to 200, 20 when not asked for,
 * and answers `{items, page, page_size, total}` (pageSchema). One rule, so a client never
 * learns a list's own default by missing its 21st item. The notification list alone stops at
 * 50, as the product rules set it.
 */
export const PAGE_SIZE_DEFAULT = 20;
export const PAGE_SIZE_MAX = 200;

/** `page` (from 1) and `page_size` query parameters, shared by every paged list. */
export function pageQuery(maxPageSize = PAGE_SIZE_MAX) {
  const defaultPageSize = Math.min(PAGE_SIZE_DEFAULT, maxPageSize);
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
