import { eventInsertSql } from '../src/domain/events/outbox';
import { ledgerInsertSql } from '../src/domain/ledger/ledger';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { Webhook } from 'standardwebhooks';
import { CLAIM_INBOUND, TOUCH_INTEGRATION_SETTLED } from '../src/domain/payments/payments.queries';
import { D, money } from '../src/platform/decimal';
import { pgPlaceholders } from '../src/platform/named-sql';
import { CHILD_EXEC_ARGV, fmt, type Figure, type Harness, type RunWindow, type Server } from './lib/harness';
import { BENCH_ADMIN as ADMIN, benchCustomer, measureLoop, ownDatabase, progressOf, request } from './lib/bench-kit';
import { call, measure, nextSeq, type LoadResult } from './lib/load';

/** One `deposit.completed` event: $1 at, $2 login, $3 customer, $4 data. */
const EVENT_INSERT = eventInsertSql({
  type: 'deposit.completed',
  aggregateType: 'account',
  aggregateId: '$2::text',
  customerId: '$3::uuid',
  data: '$4::json',
  at: '$1::timestamptz',
});

/** One `deposit` ledger row: $1 at, $2 account, $3 amount, $4 balance after, $5 intent, $6 comment. */
const LEDGER_INSERT = ledgerInsertSql([
  {
    id: 'gen_random_uuid()',
    bookedAt: '$1::timestamptz',
    accountId: '$2::uuid',
    kind: 'deposit',
    amount: '$3::numeric',
    balanceAfter: '$4::numeric',
    referenceType: 'deposit_intent',
    referenceId: '$5::text',
    comment: '$6::text',
    from: '(select 1) one',
  },
]);
/**
 * Provider callbacks, `POST /api/integrations/payments/{provider_id}/callbacks`: what a payment
 * costs from the provider's signed report to the credited wallet.
 *
 * 1. Unique `completed` reports, each for a pending intent of its own (request n completes
 *    intent n): the provider read (its row, then its two sealed secrets, three selects), the
 *    signature check, and the one transaction that claims the report's key in the inbound log,
 *    locks the intent and the wallet, books the deposit's ledger row and balance, writes the
 *    `deposit.completed` event and completes the intent, then marks the provider's last call
 *    after the commit (at most once a second); against that same work sent straight through
 *    `pg` from this process, with the service's pool size. The baseline reuses the service's
 *    CLAIM_INBOUND and TOUCH_INTEGRATION_SETTLED; the statements the ORM composes (the locking reads, the
 *    provider's fee read, the flushes) are written here to match what the service sends, in its
 *    order, column for column (traced with log_statement=all). It reads no provider and checks
 *    no signature before its transaction: those are the service's cost in the ratio, with
 *    express, zod and the unit of work.
 * 2. A storm of duplicates: one report already applied, sent again and again under new
 *    webhook-ids (each answers 200 `duplicate`: its claim finds the key taken and commits
 *    nothing, and the call is logged in a second transaction), against unique reports, both
 *    through the route.
 *
 * What the figures show by design:
 * - A processed callback marks its provider's `integrations` row after its commit, and only
 *   when the last mark is a second old, so callbacks of one provider do not queue on that
 *   row's lock. A duplicate's call is logged in a transaction of its own, which does mark it.
 * - The intent is updated twice: the unit of work is flushed before the deposit flow's `after`
 *   posting hooks run (its external id and updated_at go then), and again at commit (its
 *   completion). The baseline matches that too.
 * - The intents belong to CUSTOMERS customers (intent n to customer n mod CUSTOMERS), so the
 *   wallets' locks (held from the lock to the commit) add no queue of their own; one wallet
 *   for every callback would.
 *
 * Intents are written straight into deposit_intents (the row POST /customers/me/deposits
 * writes: pending, 10.00 USD into the wallet), with ids made from the run's tag and their
 * number, so request n's body is computed from n alone; more are added between slices when a
 * side might run out (BENCH_PAYMENT_INTENTS sets the first batch, 100,000). A request's
 * signature is made with the current time over its exact body, sent as is, as a provider signs.
 */
const progress = progressOf('payments');
const CUSTOMERS = 16;
const CONNECTIONS = 16;
/** The service's pool size: the baseline gets as many connections. */
const POOL_SIZE = 10;
const FIRST_INTENTS = Number(process.env.BENCH_PAYMENT_INTENTS ?? 100_000);
const AMOUNT = '10.00';

interface Provider {
  id: string;
  name: string;
}

interface Holder {
  customerId: string;
  walletId: string;
  login: string;
}

export async function run(h: Harness): Promise<Figure[]> {
  const own = ownDatabase('payments', POOL_SIZE);
  const { tag, pool } = own;
  let api: Server | undefined;
  try {
    api = await h.start({ entry: 'servers/service.ts', name: 'api', execArgv: CHILD_EXEC_ARGV, env: own.apiEnv });
    const { provider, secret, holders } = await setUp(api, pool, tag);
    const intents = new Intents(pool, tag, provider, holders);
    await intents.ensure(FIRST_INTENTS);
    progress(`${fmt(FIRST_INTENTS)} pending intents over ${CUSTOMERS} wallets`);

    const signer = new Webhook(secret);
    const url = api.url(`/api/integrations/payments/${provider.id}/callbacks`);
    const signed = (body: string, seq: number) => {
      const id = `msg_${tag}_${seq}`;
      const at = new Date();
      return {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': signer.sign(id, at, body),
      };
    };
    // build() asks for the headers and then the body of one sequence number: the body is made once.
    let last = { seq: -1, body: '' };
    const bodyOf = (seq: number) => (last.seq === seq ? last.body : (last = { seq, body: intents.report(seq).body }).body);
    const unique = {
      url,
      method: 'POST',
      headers: (seq: number) => signed(bodyOf(seq), seq),
      body: (seq: number) => bodyOf(seq),
    };

    // The check of each side, which also gives the storm its report: the first one, applied.
    const first = nextSeq();
    await intents.ensure(first + 1);
    const checked = await call(url, { method: 'POST', headers: unique.headers(first), body: unique.body(first) });
    if (checked.status !== 200 || (JSON.parse(checked.body) as { outcome?: string }).outcome !== 'processed')
      throw new Error(`a callback answered ${checked.status}: ${checked.body.slice(0, 300)}`);
    const stormBody = intents.report(first).body;
    const storm = { url, method: 'POST', headers: (seq: number) => signed(stormBody, seq), body: stormBody };
    const again = await call(url, { method: 'POST', headers: storm.headers(nextSeq()), body: stormBody });
    if (again.status !== 200 || (JSON.parse(again.body) as { outcome?: string }).outcome !== 'duplicate')
      throw new Error(`a repeated callback answered ${again.status}: ${again.body.slice(0, 300)}`);
    const plainSeq = nextSeq();
    await intents.ensure(plainSeq + 1);
    await plainCallback(pool, intents, plainSeq);

    // Each side draws its intents from the one sequence (nextSeq), so none is sent twice; before
    // each of its windows a side makes sure the intents it could reach at twice its best rate so far exist.
    const rates = { service: [] as number[], pg: [] as number[], unique: [] as number[] };
    const paced = async (rates: number[], window: RunWindow, side: () => Promise<LoadResult>): Promise<LoadResult> => {
      const best = Math.max(2000, ...rates);
      await intents.ensure(nextSeq() + Math.ceil((best * 2 * (window.durationMs + window.warmupMs)) / 1000) + 1000);
      const result = await side();
      rates.push(result.rps);
      return result;
    };
    const figures: Figure[] = [];
    figures.push(
      await h.compareRuns({
        name: `POST /api/integrations/payments/{id}/callbacks (unique completed reports) rps vs the same transaction via pg, ${CONNECTIONS} in flight`,
        connections: CONNECTIONS,
        candidate: (window) => paced(rates.service, window, () => measure({ ...unique, ...window })),
        baseline: (window) =>
          paced(rates.pg, window, () => measureLoop(window, () => plainCallback(pool, intents, nextSeq()), progress)),
      }),
    );
    progress(
      `p99 of a callback under this load: ${fmt(figures[0]!.candidateP99Ms, 1)} ms through the route, ` +
        `${fmt(figures[0]!.baselineP99Ms, 1)} ms straight through pg`,
    );
    figures.push(
      await h.compareRuns({
        name: `POST /api/integrations/payments/{id}/callbacks: a storm of duplicates vs unique reports, ${CONNECTIONS} in flight`,
        connections: CONNECTIONS,
        candidate: (window) => measure({ ...storm, ...window }),
        baseline: (window) => paced(rates.unique, window, () => measure({ ...unique, ...window })),
      }),
    );
    progress(
      `p99 of a callback under this load: ${fmt(figures[1]!.candidateP99Ms, 1)} ms for a duplicate, ` +
        `${fmt(figures[1]!.baselineP99Ms, 1)} ms for a unique report`,
    );
    await checkBooks(pool, provider.id);
    return figures;
  } finally {
    await api?.stop();
    await own.close();
  }
}

/**
 * The run's intents: intent n has the id `<tag>-0000-4000-8000-<n in 12 hex digits>` (a valid
 * UUID of version 4), belongs to customer n mod CUSTOMERS, and is added by `ensure` in batches.
 */
class Intents {
  private count = 0;

  constructor(
    private readonly pool: Pool,
    private readonly tag: string,
    readonly provider: Provider,
    private readonly holders: Holder[],
  ) {}

  id(n: number): string {
    return `${this.tag}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
  }

  /** Report n as the provider sends it: `completed`, the intent's amount and currency, and the exact body signed. */
  report(n: number): { externalId: string; body: string } {
    const externalId = `pay-${this.tag}-${n}`;
    const body = { external_id: externalId, intent_id: this.id(n), status: 'completed', amount: AMOUNT, currency: 'USD' };
    return { externalId, body: JSON.stringify(body) };
  }

  holder(n: number): Holder {
    return this.holders[n % this.holders.length]!;
  }

  /** Makes intents 0 to `upTo - 1` exist. */
  async ensure(upTo: number): Promise<void> {
    if (upTo <= this.count) return;
    const from = this.count;
    const to = Math.max(upTo, from + 10_000);
    await this.pool.query(
      `insert into deposit_intents (id, created_at, updated_at, provider_id, customer_id, account_id, login, amount, currency, status, expires_at)
       select ($1 || '-0000-4000-8000-' || lpad(to_hex(i), 12, '0'))::uuid, now(), now(), $2,
              ($3::uuid[])[1 + i % $6], ($4::uuid[])[1 + i % $6], ($5::bigint[])[1 + i % $6],
              $7, 'USD', 'pending', now() + interval '1 day'
         from generate_series($8::bigint, $9::bigint - 1) i`,
      [
        this.tag,
        this.provider.id,
        this.holders.map((h) => h.customerId),
        this.holders.map((h) => h.walletId),
        this.holders.map((h) => h.login),
        this.holders.length,
        AMOUNT,
        from,
        to,
      ],
    );
    this.count = to;
  }
}

/**
 * The baseline: callback n's transaction through plain `pg`, statement for statement as
 * claimAndApply sends it for a `completed` report of the intent's amount and currency into a
 * USD wallet, from a provider taking no fee: the claim, the intent and the wallet locked, the
 * provider read for its fee, then what the unit of work flushes before the deposit's `after`
 * posting hooks run (the event, the ledger row, the balance, the intent's external id: the one
 * hook of the flow, deposit bonuses, returns at once for a wallet), the provider touched, and
 * the intent's completion flushed at commit. The service sends the ORM's statements as text
 * with the values quoted in; these send the same values as parameters.
 */
async function plainCallback(pool: Pool, intents: Intents, n: number): Promise<void> {
  const { provider } = intents;
  const intentId = intents.id(n);
  const holder = intents.holder(n);
  const { externalId, body } = intents.report(n);
  const client = await pool.connect();
  try {
    await client.query('begin');
    const claim = CLAIM_INBOUND.bind({
      id: randomUUID(),
      integration_id: provider.id,
      source_ip: '127.0.0.1',
      external_id: externalId,
      dedupe_key: `${externalId}:completed`,
      body,
    });
    const claimed = await client.query(pgPlaceholders(claim.sql), claim.values);
    if (claimed.rowCount !== 1) throw new Error(`report ${externalId} was claimed already`);
    const intent = await client.query<{ status: string }>(
      'select * from deposit_intents where id = $1 and provider_id = $2 limit 1 for update',
      [intentId, provider.id],
    );
    if (intent.rows[0]?.status !== 'pending') throw new Error(`intent ${intentId} is ${intent.rows[0]?.status ?? 'missing'}`);
    const account = await client.query<{ balance: string }>('select * from accounts where id = $1 limit 1 for update', [
      holder.walletId,
    ]);
    await client.query(
      'select id, created_at, updated_at, kind, adapter, name, enabled, config, previous_secret_expires_at, last_inbound_at, last_error from integrations where id = $1 limit 1',
      [provider.id],
    );
    const balance = money(new D(account.rows[0]!.balance).plus(AMOUNT)).toFixed(2);
    const bookedAt = new Date();
    const comment = `Deposit through ${provider.name}`;
    const event = {
      id: intentId,
      login: Number(holder.login),
      amount: AMOUNT,
      currency: 'USD',
      balance,
      comment,
      created_at: bookedAt.toISOString(),
      provider_id: provider.id,
      external_id: externalId,
      intent_id: intentId,
    };
    // The same rows the ORM's flush writes, through the outbox's and the ledger's own inserts.
    await client.query(EVENT_INSERT, [bookedAt, holder.login, holder.customerId, JSON.stringify(event)]);
    await client.query(LEDGER_INSERT, [bookedAt, holder.walletId, AMOUNT, balance, intentId, comment]);
    await client.query('update accounts set balance = $1, updated_at = $2 where id = $3', [balance, new Date(), holder.walletId]);
    await client.query('update deposit_intents set updated_at = $1, external_id = $2 where id = $3', [
      new Date(),
      externalId,
      intentId,
    ]);
    await client.query(
      `update deposit_intents set status = 'completed', credited_amount = $1, credited_currency = 'USD', updated_at = $2 where id = $3`,
      [AMOUNT, new Date(), intentId],
    );
    await client.query('commit');
    // After the commit, as the service marks the provider's last call (a no-op within a second of the last mark).
    const touch = TOUCH_INTEGRATION_SETTLED.bind({ id: provider.id });
    await client.query(pgPlaceholders(touch.sql), touch.values);
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

// ---------------------------------------------------------------------------------------------
// Setup, through the API as a broker would do it

async function setUp(api: Server, pool: Pool, tag: string): Promise<{ provider: Provider; secret: string; holders: Holder[] }> {
  const admin = (await request<{ access_token: string }>(api, 'POST', '/api/admin/users/login', '', ADMIN, 200)).access_token;
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const provider = await request<Provider>(
    api,
    'POST',
    '/api/admin/payment-providers',
    admin,
    {
      name: `Bench PSP ${tag}`,
      kind: 'psp',
      adapter: 'generic_hmac',
      currencies: ['USD'],
      min_amount: 10,
      max_amount: 5000,
      fee: { type: 'none', value: 0, borne_by: 'broker' },
      callback_secret: secret,
      enabled: true,
    },
    201,
  );
  const group = await request<{ id: string }>(api, 'POST', '/groups', admin, { name: `bench-payments-${tag}` }, 201);
  const holders: Holder[] = [];
  for (let i = 0; i < CUSTOMERS; i++) {
    const { customerId } = await benchCustomer(api, admin, {
      email: `bench-payments-${tag}-${i}@bench.test`,
      lastName: `Customer ${i}`,
      groupId: group.id,
    });
    const wallet = await pool.query<{ id: string; login: string }>(
      `select id, login::text as login from accounts where customer_id = $1 and kind = 'wallet'`,
      [customerId],
    );
    holders.push({ customerId, walletId: wallet.rows[0]!.id, login: wallet.rows[0]!.login });
  }
  progress(`a generic_hmac provider and ${CUSTOMERS} customers with a USD wallet`);
  return { provider: { id: provider.id, name: provider.name }, secret, holders };
}

/**
 * Both sides took reports through the same statements: every processed call completed its
 * intent, every completed intent has one deposit row, and every wallet its ledger's sum.
 */
async function checkBooks(pool: Pool, provider: string): Promise<void> {
  const mismatches = await pool.query(
    `select a.login from accounts a left join ledger_entries l on l.account_id = a.id
      group by a.id having a.balance <> coalesce(sum(l.amount), 0)`,
  );
  const counts = await pool.query<{ processed: string; completed: string; deposits: string; duplicates: string }>(
    `select (select count(*) from integration_inbound where integration_id = $1 and outcome = 'processed')::text as processed,
            (select count(*) from deposit_intents where status = 'completed')::text as completed,
            (select count(*) from ledger_entries where reference_type = 'deposit_intent')::text as deposits,
            (select count(*) from integration_inbound where integration_id = $1 and outcome = 'duplicate')::text as duplicates`,
    [provider],
  );
  const { processed, completed, deposits, duplicates } = counts.rows[0]!;
  if (mismatches.rowCount || processed !== completed || completed !== deposits)
    throw new Error(
      `books do not balance: ${mismatches.rowCount} accounts off their ledger, ${processed} processed calls, ` +
        `${completed} completed intents, ${deposits} deposits`,
    );
  progress(
    `books balance: ${fmt(Number(completed))} intents completed and credited once, ${fmt(Number(duplicates))} duplicates logged`,
  );
}
