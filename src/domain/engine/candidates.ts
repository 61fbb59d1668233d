import type { EntityManager } from '@mikro-orm/postgresql';
import type { MarginHolder } from './margin';

/** Candidates read per query: a tick that triggers more pages through them by ticket. */
export const PAGE = 500;

export type Stage = 'trail' | 'stops' | 'pending';

/**
 * How far any account's quote of a symbol can lie from the raw quote: half the widest group
 * spread (spreads are never negative), as `band.h`. The candidate lookups widen their bounds
 * by it, and each candidate is then decided at its own account's quote. Takes the symbol.
 */
const BAND_CTE = `with band as (select coalesce((select max(gi.spread) * power(10::numeric, -i.digits) / 2
  from instruments i join group_instruments gi on gi.instrument_id = i.id where i.symbol = ? group by i.digits), 0) as h)`;
const LOW = `(?::numeric - (select h from band))`;
const HIGH = `(?::numeric + (select h from band))`;
const LIVE = `(expiry_at is null or expiry_at > now())`;

/**
 * The lookups of a pass, each an index range bounded by the raw quote (each takes the symbol
 * and one side of the quote), in the order the pass acts on them: trailing stops (a buy's
 * moves once bid - distance > sl, a sell's once ask + distance < sl), then sl and tp (buys
 * close at bid: bid <= sl, bid >= tp; sells at ask: ask >= sl, ask <= tp), then pending
 * orders by watch class (see the Engine migration) and watch price.
 */
const BRANCHES: Array<{ stage: Stage; from: string; where: string; price: 'bid' | 'ask' }> = [
  {
    stage: 'trail',
    from: 'orders',
    where: `symbol = ? and status = 'open' and cmd = 0 and trailing_stop is not null and coalesce(sl + trailing_stop, 0) < ?`,
    price: 'bid',
  },
  {
    stage: 'trail',
    from: 'orders',
    where: `symbol = ? and status = 'open' and cmd = 1 and trailing_stop is not null and coalesce(sl - trailing_stop, 1e20) > ?`,
    price: 'ask',
  },
  {
    stage: 'stops',
    from: 'orders',
    where: `symbol = ? and status = 'open' and cmd = 0 and sl is not null and sl >= ${LOW}`,
    price: 'bid',
  },
  {
    stage: 'stops',
    from: 'orders',
    where: `symbol = ? and status = 'open' and cmd = 0 and tp is not null and tp <= ?`,
    price: 'bid',
  },
  {
    stage: 'stops',
    from: 'orders',
    where: `symbol = ? and status = 'open' and cmd = 1 and sl is not null and sl <= ${HIGH}`,
    price: 'ask',
  },
  {
    stage: 'stops',
    from: 'orders',
    where: `symbol = ? and status = 'open' and cmd = 1 and tp is not null and tp >= ?`,
    price: 'ask',
  },
  // 1: a buy the ask falls to; 2: a buy the ask rises to; 3: a sell the bid rises to; 4: a sell the bid falls to.
  { stage: 'pending', from: 'pending_orders', where: `symbol = ? and watch = 1 and watch_price >= ? and ${LIVE}`, price: 'ask' },
  {
    stage: 'pending',
    from: 'pending_orders',
    where: `symbol = ? and watch = 2 and watch_price <= ${HIGH} and ${LIVE}`,
    price: 'ask',
  },
  { stage: 'pending', from: 'pending_orders', where: `symbol = ? and watch = 3 and watch_price <= ? and ${LIVE}`, price: 'bid' },
  {
    stage: 'pending',
    from: 'pending_orders',
    where: `symbol = ? and watch = 4 and watch_price >= ${LOW} and ${LIVE}`,
    price: 'bid',
  },
];

/**
 * The accounts holding the symbol (an open order on it): those whose margin a tick of it may
 * move, each with what the margin pre-check needs (balance, credit, currency, group, leverage, the
 * group's margin call level, every open order of the account) and whether a prop challenge
 * of theirs is active, as one JSON object per account. Takes the symbol.
 */
const HOLDERS = `select row_to_json(h) as holder from (
  select a.id as account_id, a.margin_call_active, a.balance::text as balance, a.credit::text as credit, a.currency, a.group_id,
    coalesce(a.leverage, g.default_leverage, 1) as leverage, g.margin_call_level::text as margin_call_level,
    exists (select 1 from prop_challenges c where c.account_id = a.id and c.status = 'active') as challenge,
    coalesce((select json_agg(json_build_object('symbol', o.symbol, 'cmd', o.cmd, 'volume', o.volume::text,
                     'openPrice', o.open_price::text, 'contractSize', o.contract_size::text))
                from orders o where o.account_id = a.id and o.status = 'open'), '[]'::json) as open
    from accounts a left join trading_groups g on g.id = a.group_id
   where a.id in (select account_id from orders where symbol = ? and status = 'open')) h`;

/** The branch number of the holders' rows in the pass's lookup, after the candidate branches. */
const HOLDERS_BRANCH = BRANCHES.length;

/**
 * The one statement that finds what a pass acts on: the first page (PAGE + 1 tickets) of
 * every candidate lookup, tagged with its branch, and the accounts holding the symbol (their
 * own branch, ticket null). The bench's baseline sends it through `pg`.
 */
export function passLookup(symbol: string, bid: string, ask: string): { sql: string; params: string[] } {
  const candidates = BRANCHES.map(
    (b, i) =>
      `(select ${i} as branch, ticket, null::json as holder from ${b.from} where ${b.where} and ticket > 0 order by ticket limit ${PAGE + 1})`,
  );
  return {
    sql: `${BAND_CTE} ${[...candidates, `(select ${HOLDERS_BRANCH} as branch, null::bigint as ticket, holder from (${HOLDERS}) hs)`].join(' union all ')}`,
    params: [symbol, ...BRANCHES.flatMap((b) => [symbol, b.price === 'bid' ? bid : ask]), symbol],
  };
}

/** The accounts holding the symbol, as the pass's lookup reads them (for a pass that must read them again). */
export function holdersLookup(symbol: string): { sql: string; params: string[] } {
  return { sql: HOLDERS, params: [symbol] };
}

/** A row of the pass's lookup: a candidate ticket of a branch, or an account holding the symbol. */
export interface LookupRow {
  branch: number;
  ticket: string | null;
  holder: MarginHolder | null;
}

/** The pass's lookup rows split: candidate tickets (by branch), and the holders. */
export function splitLookup(rows: LookupRow[]): { candidates: FirstPageRow[]; holders: MarginHolder[] } {
  const candidates: FirstPageRow[] = [];
  const holders: MarginHolder[] = [];
  for (const r of rows) {
    if (Number(r.branch) === HOLDERS_BRANCH) holders.push(r.holder!);
    else candidates.push({ branch: Number(r.branch), ticket: String(r.ticket) });
  }
  return { candidates, holders };
}

/**
 * Pages through the tickets an indexed query names after ticket `after`, `PAGE` at a time in
 * ticket order, and hands each page to `work`. The query takes the last ticket seen as its
 * final parameter.
 */
export async function forCandidates(
  em: EntityManager,
  sql: string,
  params: unknown[],
  after: string,
  work: (tickets: string[]) => Promise<void>,
): Promise<void> {
  for (;;) {
    const rows = await em.execute<Array<{ ticket: string }>>(`${sql} and ticket > ? order by ticket limit ${PAGE}`, [
      ...params,
      after,
    ]);
    if (rows.length === 0) return;
    await work(rows.map((r) => String(r.ticket)));
    if (rows.length < PAGE) return;
    after = String(rows[rows.length - 1]!.ticket);
  }
}

/** A ticket the pass's first lookup found, tagged with the branch that found it. */
export interface FirstPageRow {
  branch: number;
  ticket: string;
}

/**
 * Hands `work` every candidate of a stage's branches, a page at a time: first the pass's
 * lookup rows of each branch, then, for a branch that had more than a page, the rest read
 * on its own.
 */
export async function forStage(
  em: EntityManager,
  first: FirstPageRow[],
  stage: Stage,
  quote: { symbol: string; bid: string; ask: string },
  work: (tickets: string[]) => Promise<void>,
): Promise<void> {
  for (const [i, b] of BRANCHES.entries()) {
    if (b.stage !== stage) continue;
    const tickets = first.filter((r) => Number(r.branch) === i).map((r) => String(r.ticket));
    if (tickets.length === 0) continue;
    // The lookup read one ticket past a page to know there are more: work the page, then
    // go on after its last ticket (not from the start, which would work the page twice).
    const page = tickets.slice(0, PAGE);
    await work(page);
    if (tickets.length > PAGE)
      await forCandidates(
        em,
        `${BAND_CTE} select ticket from ${b.from} where ${b.where}`,
        [quote.symbol, quote.symbol, b.price === 'bid' ? quote.bid : quote.ask],
        page[page.length - 1]!,
        work,
      );
  }
}
