import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Account, type AccountKind } from '../../entities/account.entity';
import { D, dec, money, type Dec } from '../../platform/decimal';
import { errors, fieldError } from '../../platform/errors';
import { namedStatement, type Statement } from '../../platform/named-sql';
import { executeBoundInTransaction } from '../../db/bound-statement';
import { boundTransaction, type RunBound } from '../../db/bound-transaction';
import { unreserved } from '../accounts/accounts';
import { eventInsertSql } from '../events/outbox';
import { ledgerInsertSql } from '../ledger/ledger';
import {
  afterPosting,
  balanceUpdateSql,
  beforePosting,
  POSTED_CUSTOMER_COLUMNS,
  postedCustomer,
  type PostedCustomerColumns,
  type Posting,
} from '../ledger/posting';
import { loadMetrics } from '../accounts/account-metrics';
import { convertAtDealerRate, CurrencyConverter, IDENTITY_RATE, type DealerRate } from '../prices/conversion';
import type { QuoteStore } from '../prices/quote-store';
import { assertCreditFits } from '../../platform/bounds';
import { CurrencyCode } from '../../platform/money-text';

/** The transfer result of endpoint 12, with the spec's types: logins as text, amounts and the rate as numbers. */
export const TransferSchema = z.object({
  transfer_out_id: z.uuid().describe("The debit: its id is the ledger row's in the source account"),
  transfer_in_id: z.uuid().describe("The credit: its id is the ledger row's in the target account"),
  from_login: z.string().regex(/^[0-9]+$/),
  to_login: z.string().regex(/^[0-9]+$/),
  amount: z.number().describe('Debited from the source, in its currency'),
  from_currency: CurrencyCode,
  to_currency: CurrencyCode,
  converted_amount: z.number().describe('Credited to the target, in its currency'),
  status: z.literal('completed'),
  source: z.string().describe('The symbol(s) whose quotes converted it, comma-separated when crossed through USD, or `identity`'),
  effective_rate: z.number().describe('converted_amount / amount'),
});
export type TransferView = z.output<typeof TransferSchema>;

/** The `transfer.completed` event's data: the transfer result and when it was booked. */
export type TransferEventData = TransferView & { created_at: string };

export interface TransferRequest {
  from_login: number;
  to_login: number;
  /** At most two decimals (the route's schema). */
  amount: number;
  /** Confirms a bonus forfeiture quoted before (read by the bonus hook from the posting's request). */
  accept_bonus_forfeit?: boolean;
}

/**
 * What may take part in a transfer. Demo accounts hold play money: a transfer out of one
 * would turn it into real money, and into one would lose real money. Prop accounts trade the
 * firm's capital, and their profit leaves through payouts: a transfer
 * out would hand the capital over, a transfer in would move the payout baseline.
 */
const TRANSFERABLE: ReadonlySet<AccountKind> = new Set(['wallet', 'live']);

interface LockedAccountRow extends PostedCustomerColumns {
  id: string;
  login: string;
  kind: AccountKind;
  currency: string;
  balance: string;
  credit: string;
  reserved: string;
}

/**
 * The caller's two accounts, found and locked in one statement: another customer's login
 * matches nothing (404, as if absent) and is never locked. Rows lock in id order, the order
 * lockAccounts uses (uuid order is the order of its text), so transfers each way between two
 * accounts, and anything else that locks accounts, queue instead of deadlocking: ORDER BY
 * sorts before FOR UPDATE locks, so the rows lock one after the other in that order. The
 * customer's access, email and country come along (its row is read, not locked): the access
 * and fraud hooks of the transfer out read them from the posting instead of a statement each.
 */
const LOCK_OWN_PAIR = namedStatement<{ customer_id: string; from_login: string; to_login: string }>(
  `select a.id, a.login::text as login, a.kind, a.currency, a.balance::text as balance, a.credit::text as credit,
          a.reserved::text as reserved, ${POSTED_CUSTOMER_COLUMNS}
     from accounts a join customers c on c.id = a.customer_id
    where a.customer_id = :customer_id and a.login in (:from_login, :to_login) order by a.id for update of a`,
);

/**
 * Read after the lock, in a statement of its own: a statement that waited for the lock reads
 * other tables as of when it started, and would miss an order a racing market order
 * committed meanwhile.
 */
const HAS_OPEN_ORDERS = namedStatement<{ account_id: string }>(
  `select exists (select 1 from orders where account_id = :account_id and status = 'open') as has_open`,
);

/** What the booking statement writes, by name. */
export interface TransferParams {
  transfer_out_id: string;
  transfer_in_id: string;
  customer_id: string;
  from_account_id: string;
  to_account_id: string;
  from_login: string;
  to_login: string;
  /** Decimal text, two decimals, positive: debited from the source. */
  amount: string;
  from_currency: string;
  /** Decimal text, two decimals, positive: credited to the target. */
  converted_amount: string;
  to_currency: string;
  source: string;
  rate_multiplier: string;
  rate_divisor: string;
  booked_at: Date;
  /** The transfer.completed event's data as JSON text. */
  event: string;
}

type TransferBinding = TransferParams & { debit: string; out_comment: string; in_comment: string };

/**
 * The booking, one statement: both balances, both ledger legs (the debit first, so it books
 * first), the transfer record and the transfer.completed event. The rows are already locked.
 * A balance changes here and not through postToLedger for the round trips: this is the hot
 * path of money movement, and the unit of work would send four statements where this sends one
 * (the ledger's rules hold all the same: balance_after is the balance the row leaves, and the
 * row is written under the account's lock in the transaction that changes the balance).
 */
const BOOK = namedStatement<TransferBinding>(`
with f as (
  ${balanceUpdateSql({ delta: '-:amount::numeric', at: ':booked_at::timestamptz', where: 'id = :from_account_id::uuid', returning: 'balance' })}
), t as (
  ${balanceUpdateSql({ delta: ':converted_amount::numeric', at: ':booked_at::timestamptz', where: 'id = :to_account_id::uuid', returning: 'balance' })}
), l as (
  ${ledgerInsertSql([
    {
      id: ':transfer_out_id::uuid',
      bookedAt: ':booked_at::timestamptz',
      accountId: ':from_account_id::uuid',
      kind: 'transfer_out',
      amount: ':debit::numeric',
      balanceAfter: 'f.balance',
      referenceType: 'transfer',
      referenceId: ':transfer_out_id::text',
      comment: ':out_comment::text',
      from: 'f',
    },
    {
      id: ':transfer_in_id::uuid',
      bookedAt: ':booked_at::timestamptz',
      accountId: ':to_account_id::uuid',
      kind: 'transfer_in',
      amount: ':converted_amount::numeric',
      balanceAfter: 't.balance',
      referenceType: 'transfer',
      referenceId: ':transfer_out_id::text',
      comment: ':in_comment::text',
      from: 't',
    },
  ])}
), r as (
  insert into transfers (id, created_at, updated_at, transfer_in_id, customer_id, from_account_id, to_account_id, from_login, to_login,
                         amount, from_currency, converted_amount, to_currency, source, rate_multiplier, rate_divisor)
  values (:transfer_out_id, :booked_at, :booked_at, :transfer_in_id, :customer_id, :from_account_id, :to_account_id, :from_login, :to_login,
          :amount, :from_currency, :converted_amount, :to_currency, :source, :rate_multiplier, :rate_divisor)
  returning id
), e as (
  ${eventInsertSql({
    type: 'transfer.completed',
    aggregateType: 'transfer',
    aggregateId: ':transfer_out_id::text',
    customerId: ':customer_id::uuid',
    data: ':event::json',
    at: ':booked_at::timestamptz',
  })}
)
select (select count(*) from l)::int as legs`);

/**
 * The statements of one transfer, in the order transferFunds sends them inside its transaction
 * (the bench's plain `pg` baseline sends the same ones): find and lock the caller's two
 * accounts, look for open orders on a live source, book.
 */
export const transferStatements = {
  lockOwnPair: (customerId: string, fromLogin: number | string, toLogin: number | string): Statement =>
    LOCK_OWN_PAIR.bind({ customer_id: customerId, from_login: String(fromLogin), to_login: String(toLogin) }),
  hasOpenOrders: (accountId: string): Statement => HAS_OPEN_ORDERS.bind({ account_id: accountId }),
  book: (p: TransferParams): Statement =>
    BOOK.bind({
      ...p,
      debit: dec(p.amount).neg().toFixed(2),
      out_comment: `Transfer to ${p.to_login}`,
      in_comment: `Transfer from ${p.from_login}`,
    }),
};

/** The booking's parameters and the answer, from the two accounts, the amount and the rate. */
export function transferBooking(input: {
  customerId: string;
  from: { id: string; login: string; currency: string };
  to: { id: string; login: string; currency: string };
  amount: Dec;
  converted: Dec;
  rate: DealerRate;
  bookedAt: Date;
}): { params: TransferParams; view: TransferView } {
  const view: TransferView = {
    transfer_out_id: randomUUID(),
    transfer_in_id: randomUUID(),
    from_login: input.from.login,
    to_login: input.to.login,
    amount: input.amount.toNumber(),
    from_currency: input.from.currency,
    to_currency: input.to.currency,
    converted_amount: input.converted.toNumber(),
    status: 'completed',
    source: input.rate.source,
    effective_rate: input.converted.div(input.amount).toNumber(),
  };
  const event: TransferEventData = { ...view, created_at: input.bookedAt.toISOString() };
  return {
    view,
    params: {
      transfer_out_id: view.transfer_out_id,
      transfer_in_id: view.transfer_in_id,
      customer_id: input.customerId,
      from_account_id: input.from.id,
      to_account_id: input.to.id,
      from_login: input.from.login,
      to_login: input.to.login,
      amount: input.amount.toFixed(2),
      from_currency: input.from.currency,
      converted_amount: input.converted.toFixed(2),
      to_currency: input.to.currency,
      source: input.rate.source,
      rate_multiplier: input.rate.multiplier.toFixed(),
      rate_divisor: input.rate.divisor.toFixed(),
      booked_at: input.bookedAt,
      event: JSON.stringify(event),
    },
  };
}

/**
 * What the source can give: the wallet its balance less what pending withdrawals reserve; a
 * live account its free margin at current quotes less its credit (credit carries margin but
 * never leaves), never more than its balance (floating
 * profit is not money yet: moving it out would leave a negative balance once it vanished),
 * less anything reserved. Read under the account's lock, so a racing market order either
 * committed before (its margin counts here) or waits for this transfer (and its own margin
 * check sees the lower balance).
 */
async function freeFunds(tx: EntityManager, quotes: QuoteStore, row: LockedAccountRow): Promise<Dec> {
  const available = unreserved(row);
  if (row.kind === 'wallet') return available;
  if (!(await hasOpenOrders((s) => executeBoundInTransaction(tx, s), row))) return available;
  const account = await tx.findOneOrFail(Account, row.id, { populate: ['group'], refresh: true });
  const metrics = await loadMetrics(tx, quotes, account);
  return D.min(metrics.free_margin.minus(account.credit), metrics.balance).minus(row.reserved);
}

async function hasOpenOrders(run: RunBound, row: LockedAccountRow): Promise<boolean> {
  const [found] = await run<{ has_open: boolean }>(transferStatements.hasOpenOrders(row.id));
  return found?.has_open === true;
}

/** The caller's two accounts, locked, or the refusal: 404 for a login not theirs, 422 for a kind that does not transfer. */
async function lockPair(
  run: RunBound,
  customerId: string,
  input: TransferRequest,
): Promise<{ from: LockedAccountRow; to: LockedAccountRow }> {
  const locked = await run<LockedAccountRow>(transferStatements.lockOwnPair(customerId, input.from_login, input.to_login));
  const from = locked.find((a) => a.login === String(input.from_login));
  const to = locked.find((a) => a.login === String(input.to_login));
  if (!from || !to) throw errors.notFound('Account');
  for (const [field, account] of [
    ['from_login', from],
    ['to_login', to],
  ] as const) {
    if (!TRANSFERABLE.has(account.kind))
      throw fieldError(
        'body',
        [field],
        `A ${account.kind} account does not take part in transfers: money moves between the wallet and live accounts ` +
          '(demo accounts hold no real money; prop accounts pay out through payouts)',
      );
  }
  return { from, to };
}

function posted(customerId: string, row: LockedAccountRow): Posting['account'] {
  const { customer_access: _access, customer_email: _email, customer_country: _country, ...account } = row;
  return { ...account, customerId, customer: postedCustomer(row) };
}

/**
 * Runs the posting hooks around the booking, checks the funds and the target's bound, and
 * books both legs, the record and the event (the rows are locked).
 */
async function book(
  run: RunBound,
  customerId: string,
  locked: { from: LockedAccountRow; to: LockedAccountRow },
  move: { amount: Dec; converted: Dec; rate: DealerRate; free: Dec },
  input: TransferRequest,
): Promise<TransferView> {
  const { from, to } = locked;
  const { amount, converted, rate, free } = move;
  const { params, view } = transferBooking({ customerId, from, to, amount, converted, rate, bookedAt: new Date() });
  const reference = { type: 'transfer', id: params.transfer_out_id };
  const request = { ...input };
  const out: Posting = {
    flow: 'transfer_out',
    account: posted(customerId, from),
    amount: amount.neg().toFixed(2),
    reference,
    request,
  };
  await beforePosting(run, out);
  if (amount.gt(free))
    throw fieldError(
      'body',
      ['amount'],
      `Not enough free funds: ${amount.toFixed(2)} ${from.currency} asked, ${D.max(free, 0).toFixed(2)} ${from.currency} available`,
    );
  assertCreditFits(to.balance, converted);
  const [booked] = await run<{ legs: number }>(transferStatements.book(params));
  // Both rows are locked and exist: anything but two legs is a bug, and the transaction rolls back.
  if (Number(booked?.legs) !== 2) throw new Error(`transfer ${params.transfer_out_id} booked ${booked?.legs} legs`);
  await afterPosting(run, out);
  await afterPosting(run, {
    flow: 'transfer_in',
    account: posted(customerId, to),
    amount: converted.toFixed(2),
    reference,
    request,
  });
  return view;
}

/**
 * POST /customers/me/transfer: moves money between two of
 * the caller's accounts, converting at the dealer side of the latest quotes. The answer is
 * synchronous: one transaction finds and locks both rows (in id order), reads the rate, checks
 * the funds and books both legs, the transfer record and the event. Four statements with
 * BEGIN and COMMIT (five from a live account), and the posting hooks' (the fraud rules' one;
 * the others read what the locking statement read, and the customer it read in passing).
 *
 * Hot path: most transfers move money between accounts of one currency, from the wallet or
 * from a live account with no open position, and need nothing but those statements: they run
 * in a bound transaction, without the ORM. When the locked rows show otherwise (two
 * currencies, whose instruments and quotes are read while the rows are held; a live source
 * with open positions, valued at current quotes) that transaction ends having written nothing
 * and the transfer runs again, locks and all, in the ORM's transaction, which reads them.
 */
export async function transferFunds(
  em: EntityManager,
  quotes: QuoteStore,
  customerId: string,
  input: TransferRequest,
): Promise<TransferView> {
  if (input.from_login === input.to_login)
    throw fieldError('body', ['to_login'], 'to_login must be another account than from_login');
  const amount = money(input.amount);
  const plain = await boundTransaction(em, async (run) => {
    const locked = await lockPair(run, customerId, input);
    const { from, to } = locked;
    if (from.currency !== to.currency || (from.kind !== 'wallet' && (await hasOpenOrders(run, from)))) return undefined;
    return book(run, customerId, locked, { amount, converted: amount, rate: IDENTITY_RATE, free: unreserved(from) }, input);
  });
  if (plain) return plain;

  return em.transactional(async (tx) => {
    const run: RunBound = (s) => executeBoundInTransaction(tx, s);
    const locked = await lockPair(run, customerId, input);
    const { from, to } = locked;
    const rate = await CurrencyConverter.dealerRateBetween(tx, quotes, from.currency, to.currency);
    if (!rate)
      throw fieldError(
        'body',
        ['to_login'],
        `No quote converts ${from.currency} into ${to.currency}: neither ${from.currency}${to.currency} nor ` +
          `${to.currency}${from.currency} is quoted, nor a path through USD`,
      );
    const converted = convertAtDealerRate(amount, rate);
    if (converted.lte(0))
      throw fieldError('body', ['amount'], `${amount.toFixed(2)} ${from.currency} converts to less than 0.01 ${to.currency}`);
    return book(run, customerId, locked, { amount, converted, rate, free: await freeFunds(tx, quotes, from) }, input);
  });
}
