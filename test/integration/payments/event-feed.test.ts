import { adminToken, createCustomer, createStaff } from '../../helpers/identity';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { expect422, expectError, expectOk } from '../trading/trading-kit';

/**
 * GET /api/crm/events: the pull feed a CRM syncs from, in publication order (the streams'
 * resume order), with the ids streams and webhooks carry, `after=now`, and 410 past 30 days.
 */
jest.setTimeout(90_000);

let app: TestApp;
let admin: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'crm-feed' });
  admin = await adminToken(app);
  for (let i = 0; i < 3; i++) await createCustomer(app, admin);
  await waitFor('the events to be published', async () => {
    const [row] = await sql<{ n: number }>(app, 'select count(*)::int as n from domain_events where publication_seq is null');
    return row!.n === 0;
  });
});
afterAll(() => app?.stop());

const feed = (query: string, token = admin) => app.request('GET', `/api/crm/events${query}`, { token });

async function published(): Promise<Array<{ id: string; seq: string; type: string }>> {
  return sql(
    app,
    'select id, seq::text as seq, type from domain_events where publication_seq is not null order by publication_seq',
  );
}

test('when a reader pages from the start, then it gets every event in publication order with the webhook ids and sequence, and next_after resumes', async () => {
  const all = await published();
  expect(all.length).toBeGreaterThanOrEqual(3);
  const first = expectOk(await feed('?limit=2'), 200);
  expect(first.items).toHaveLength(2);
  expect(first.items.map((e: { id: string }) => e.id)).toEqual(all.slice(0, 2).map((e) => e.id));
  expect(first.items[0]).toMatchObject({ id: all[0]!.id, sequence: Number(all[0]!.seq), type: all[0]!.type });
  expect(first.next_after).toBe(all[1]!.seq);
  const rest = expectOk(await feed(`?after=${first.next_after}&limit=1000`), 200);
  expect(rest.items.map((e: { id: string }) => e.id)).toEqual(all.slice(2).map((e) => e.id));
  // The uuid of the webhook event works as the cursor too.
  const byUuid = expectOk(await feed(`?after=${all[1]!.id}&limit=1000`), 200);
  expect(byUuid.items.map((e: { id: string }) => e.id)).toEqual(rest.items.map((e: { id: string }) => e.id));
});

test('when events are numbered in one order and published in another, then the feed follows publication, so a resumed reader skips none', async () => {
  const all = await published();
  // Swap the publication numbers of the last two: the later-written event was handed over first.
  const [a, b] = all.slice(-2);
  const pubs = await sql<{ id: string; p: string }>(
    app,
    'select id, publication_seq::text as p from domain_events where id in (?, ?)',
    [a!.id, b!.id],
  );
  const pa = pubs.find((r) => r.id === a!.id)!.p;
  const pb = pubs.find((r) => r.id === b!.id)!.p;
  await sql(app, 'update domain_events set publication_seq = -publication_seq where id = ?', [a!.id]);
  await sql(app, 'update domain_events set publication_seq = ? where id = ?', [pa, b!.id]);
  await sql(app, 'update domain_events set publication_seq = ? where id = ?', [pb, a!.id]);
  const page = expectOk(await feed('?limit=1000'), 200);
  const ids = page.items.map((e: { id: string }) => e.id);
  expect(ids.slice(-2)).toEqual([b!.id, a!.id]);
  const after = expectOk(await feed(`?after=${b!.seq}`), 200);
  expect(after.items.map((e: { id: string }) => e.id)).toEqual([a!.id]);
});

test('when a reader asks from now, then the page is empty with the current end, and new events come after it; an empty page keeps its after', async () => {
  const now = expectOk(await feed('?after=now'), 200);
  expect(now.items).toEqual([]);
  const end = await sql<{ seq: string }>(app, 'select seq::text as seq from domain_events order by publication_seq desc limit 1');
  expect(now.next_after).toBe(end[0]!.seq);
  const empty = expectOk(await feed(`?after=${now.next_after}`), 200);
  expect(empty).toEqual({ items: [], next_after: now.next_after });
  const carol = await createCustomer(app, admin);
  const fresh = await waitFor('the new event in the feed', async () => {
    const page = expectOk(await feed(`?after=${now.next_after}&types=customer.created`), 200);
    return page.items.length ? page : undefined;
  });
  expect(fresh.items.map((e: { data: { id: string } }) => e.data.id)).toEqual([carol.id]);
});

test('when after is older than 30 days or unknown, then it is 410 CURSOR_EXPIRED; a malformed after is 422', async () => {
  const [oldest] = await published();
  await sql(app, `update domain_events set created_at = now() - interval '31 days' where id = ?`, [oldest!.id]);
  expectError(await feed(`?after=${oldest!.seq}`), 410, 'CURSOR_EXPIRED');
  expectError(await feed('?after=999999999'), 410, 'CURSOR_EXPIRED');
  expect422(await feed('?after=yesterday'), ['query', 'after']);
  expect422(await feed('?limit=1001'), ['query', 'limit']);
});

test('when a caller lacks view_events, then the feed is 403', async () => {
  const clerk = await createStaff(app, ['view_customers'], admin);
  expectError(await feed('', clerk.token), 403, 'FORBIDDEN');
  const reader = await createStaff(app, ['view_events'], admin);
  expect((await feed('?limit=1', reader.token)).status).toBe(200);
});
