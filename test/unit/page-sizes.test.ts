import { z } from 'zod';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from '../../src/api/http/paging';
import { ROUTES } from '../../src/api/routes';

/**
 * Every paged list pages alike: `page_size` 20 unless asked for, at most 200 (the notification
 * list, whose bounds the product rules fix, at most 50), and its answer is the one envelope
 * `{items, page, page_size, total}`. Walks the route table, so a list added later is held to it.
 */
const paged = ROUTES.filter(
  (r) => r.method === 'get' && r.query instanceof z.ZodObject && 'page_size' in (r.query as z.ZodObject).shape,
);
const name = (r: (typeof ROUTES)[number]) => `${r.method.toUpperCase()} ${r.path}`;
const maxOf = (r: (typeof ROUTES)[number]) => (r.path === '/customers/me/notifications' ? 50 : PAGE_SIZE_MAX);

test('the walk finds the paged lists', () => {
  expect(PAGE_SIZE_DEFAULT).toBe(20);
  expect(PAGE_SIZE_MAX).toBe(200);
  expect(paged.map(name)).toEqual(
    expect.arrayContaining([
      'GET /orders',
      'GET /orders/pending',
      'GET /quotes',
      'GET /customers/me/notifications',
      'GET /customers/me/accounts',
      'GET /customers/me/documents',
      'GET /prop/challenges',
    ]),
  );
});

test.each(paged.map((r) => [name(r), r] as const))(
  'when %s is asked for no page size, then 20; past its maximum, refused',
  (_n, route) => {
    // Judged on the parameter itself: some lists require others (a date range).
    const pageSize = (route.query as z.ZodObject).shape.page_size as z.ZodType;
    expect(pageSize.parse(undefined)).toBe(PAGE_SIZE_DEFAULT);
    expect(pageSize.safeParse(String(maxOf(route))).success).toBe(true);
    expect(pageSize.safeParse(String(maxOf(route) + 1)).success).toBe(false);
  },
);

// A risk apply run is one object (the run) whose accounts are paged inside it: `items_total`
// counts them beside the run's own figures.
const OBJECT_WITH_PAGED_ITEMS = new Set(['GET /risk/rules/{rule_id}/runs/{run_id}']);

test.each(paged.filter((r) => !OBJECT_WITH_PAGED_ITEMS.has(name(r))).map((r) => [name(r), r] as const))(
  'when %s answers, then in the envelope {items, page, page_size, total}',
  (_n, route) => {
    const ok = route.responses[200]?.schema as z.ZodObject | undefined;
    expect(ok).toBeInstanceOf(z.ZodObject);
    expect(Object.keys(ok!.shape)).toEqual(expect.arrayContaining(['items', 'page', 'page_size', 'total']));
  },
);
