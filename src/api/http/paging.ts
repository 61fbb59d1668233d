import type { EntityName, FilterQuery, FindOptions } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
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

export function pageOf<T>(items: T[], total: number, page: number, pageSize: number) {
  return { items, page, page_size: pageSize, total };
}

export function pageSchema<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), page: z.int(), page_size: z.int(), total: z.int() });
}

/** One page of an entity list, counted, mapped through its API view. */
export async function findPage<T extends object, V>(
  em: EntityManager,
  entity: EntityName<T>,
  where: FilterQuery<T>,
  paging: { page: number; page_size: number },
  options: { orderBy?: FindOptions<T>['orderBy']; populate?: readonly string[] },
  view: (row: T) => V,
) {
  // MikroORM's option types are too deep for a generic helper; the shape is checked at each call.
  const [rows, total] = await em.findAndCount(entity, where, {
    ...options,
    limit: paging.page_size,
    offset: (paging.page - 1) * paging.page_size,
  } as never);
  return pageOf((rows as T[]).map(view), total, paging.page, paging.page_size);
}
