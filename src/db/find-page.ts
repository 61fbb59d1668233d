import { IsolationLevel, type EntityName, type FilterQuery, type FindOptions } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';

/** Which page of a list, as the `page` and `page_size` query parameters give it (api/http/paging). */
export interface Paging {
  page: number;
  page_size: number;
}

/**
 * One page of an entity list, counted, mapped through its API view: `{items, page,
 * page_size, total}`. Here rather than in the HTTP layer so domain lists use it too.
 */
export async function findPage<T extends object, V>(
  em: EntityManager,
  entity: EntityName<T>,
  where: FilterQuery<T>,
  paging: Paging,
  options: { orderBy?: FindOptions<T>['orderBy']; populate?: readonly string[] },
  view: (row: T) => V,
) {
  return inOneSnapshot(em, async (tx) => {
    // MikroORM's filter and option types are too deep for a generic helper; the shape is checked at each call.
    const [rows, total] = await tx.findAndCount(
      entity,
      where as never,
      {
        ...options,
        limit: paging.page_size,
        offset: (paging.page - 1) * paging.page_size,
      } as never,
    );
    return { items: (rows as T[]).map(view), page: paging.page, page_size: paging.page_size, total };
  });
}

/**
 * Runs reads that must agree in one read-only REPEATABLE READ snapshot: a page's rows and its
 * total are two statements, and each in a snapshot of its own, a row committed between them
 * was listed and not counted (a page of two items with a total of one). Inside the caller's
 * transaction they run as they are.
 */
export function inOneSnapshot<T>(em: EntityManager, read: (em: EntityManager) => Promise<T>): Promise<T> {
  if (em.isInTransaction()) return read(em);
  return em.transactional((tx) => read(tx as EntityManager), { isolationLevel: IsolationLevel.REPEATABLE_READ, readOnly: true });
}
