import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account, AccountKind } from '../../entities/account.entity';
import type { LedgerBucket, LedgerEntry, LedgerKind } from '../../entities/ledger-entry.entity';
import { appendLedgerRow } from './ledger';
import { executeBoundInTransaction } from '../../db/bound-statement';
import type { RunBound } from '../../db/bound-transaction';
import { money, type Dec } from '../../platform/decimal';

/**
 * The posting path: the only code that changes `accounts.balance` and `accounts.credit`, and the hooks that policy
 * (fraud rules, bonuses, partner rewards, negative balances) hangs on the money paths.
 *
 * A balance changes in one of two forms, and both keep the ledger's rule (the balance is the
 * sum of its rows, each row written under the account's lock in the transaction that changes
 * the balance):
 * - postToLedger, for transactions that hold the account as an entity;
 * - balanceUpdateSql, the balance update of a hot statement (a transfer, an open, a close, the
 *   end of day's swaps) that books the change and its ledger row (ledgerInsertSql) in one round
 *   trip.
 */

/**
 * Changes a bucket of an account (its balance, or its credit) and appends the ledger row in
 * the caller's transaction; the row's balance_after is what that bucket holds after it. The
 * caller must hold the account row locked (lockAccounts), so concurrent postings serialise and
 * each bucket = sum(its ledger rows) holds after every commit. Credit never goes below zero:
 * a caller refuses such a request first (a 422), so reaching it here is a bug.
 */
export function postToLedger(
  em: EntityManager,
  account: Account,
  amount: Dec,
  kind: LedgerKind,
  reference: { type: string; id: string | number },
  comment?: string | null,
  bucket: LedgerBucket = 'balance',
): LedgerEntry {
  const rounded = money(amount);
  const after = money(bucket === 'credit' ? account.credit : account.balance).plus(rounded);
  if (bucket === 'credit') {
    if (after.lt(0)) throw new Error(`credit of account ${account.login} would fall below zero`);
    account.credit = after.toFixed(2);
  } else account.balance = after.toFixed(2);
  return appendLedgerRow(em, {
    account,
    kind,
    bucket,
    amount: rounded.toFixed(2),
    balanceAfter: after.toFixed(2),
    referenceType: reference.type,
    referenceId: String(reference.id),
    comment: comment ?? null,
  });
}

/**
 * A bonus release: `amount` leaves the credit and enters the balance, as two rows of kind
 * `bonus_release` in the caller's transaction (credit -amount, then balance +amount), so
 * both buckets keep their sums and the account's total does not move.
 */
export function releaseCredit(
  em: EntityManager,
  account: Account,
  amount: Dec,
  reference: { type: string; id: string | number },
  comment?: string | null,
): [LedgerEntry, LedgerEntry] {
  const rounded = money(amount);
  return [
    postToLedger(em, account, rounded.neg(), 'bonus_release', reference, comment, 'credit'),
    postToLedger(em, account, rounded, 'bonus_release', reference, comment, 'balance'),
  ];
}

/**
 * The balance update of a statement that books money, as the body of a data-modifying CTE:
 * `delta` is added to the balance of the rows `where` picks (SQL expressions of the statement:
 * `:named` parameters or columns of its CTEs, `from` its extra FROM list). The statement must
 * book the same change as ledger rows (ledgerInsertSql) whose `balanceAfter` is the balance
 * this update returns, so the two cannot disagree.
 */
export function balanceUpdateSql(input: {
  delta: string;
  at: string;
  where: string;
  from?: string;
  returning: string;
  /** The bucket the change moves (the balance unless said): its ledger rows carry the same bucket. */
  bucket?: LedgerBucket;
}): string {
  // Each bucket's update is spelled out, so a search for the writers of either column finds this one.
  const set =
    input.bucket === 'credit'
      ? `update accounts set credit = accounts.credit + (${input.delta})`
      : `update accounts set balance = accounts.balance + (${input.delta})`;
  return `${set}, updated_at = ${input.at}${input.from ? ` from ${input.from}` : ''}
   where ${input.where}
  returning ${input.returning}`;
}

/** What moves money, as the posting hooks see it. */
export const POSTING_FLOWS = [
  'deposit',
  'withdrawal',
  'transfer_out',
  'transfer_in',
  'payout',
  'order_open',
  'order_close',
  // A provider's charge-back or refund taking a deposit back: where a fraud case or the
  // forfeit of bonuses granted on that deposit attach, inside the reversal's transaction.
  'deposit_reversal',
] as const;
export type PostingFlow = (typeof POSTING_FLOWS)[number];

/** The account a posting moves, as its locking statement read it (balances as decimal text). */
export interface PostedAccount {
  id: string;
  login: string;
  customerId: string | null;
  kind: AccountKind;
  currency: string;
  balance: string;
  /** The non-withdrawable bucket: nothing a posting moves out of the balance draws on it. */
  credit: string;
  reserved: string;
  /**
   * Whether the account's customer trades under an introducing broker (attributed to one, or
   * one itself), as a close statement reads it in passing (referredSql): the partner rewards
   * skip a close without it at no cost. Undefined on the paths that do not read it.
   */
  referred?: boolean;
  /**
   * The account's customer as the locking statement read it in passing: the hooks that need
   * it read no row of their own. Undefined on the paths that do not read it, null for an
   * account without a customer.
   */
  customer?: { access: string; email: string; country: string | null } | null;
}

/**
 * The columns a locking statement reads its account's customer with (the customers row as
 * `c`, read in passing, not locked), for PostedAccount.customer: one spelling for every path
 * whose hooks take the customer from the posting.
 */
export const POSTED_CUSTOMER_COLUMNS = 'c.access as customer_access, c.email as customer_email, c.country as customer_country';

/** The customer as POSTED_CUSTOMER_COLUMNS read it; all null for an account without a customer. */
export interface PostedCustomerColumns {
  customer_access: string | null;
  customer_email: string | null;
  customer_country: string | null;
}

/** PostedAccount.customer from the columns its locking statement read (POSTED_CUSTOMER_COLUMNS). */
export function postedCustomer(row: PostedCustomerColumns): PostedAccount['customer'] {
  if (row.customer_access === null) return null;
  return { access: row.customer_access, email: row.customer_email!, country: row.customer_country };
}

/**
 * The flows whose path books in one statement that takes hooks' statement parts: the close
 * (see closeStatement in src/domain/orders/close-statements.ts, which documents the names a part
 * may read).
 */
export const STATEMENT_FLOWS: readonly PostingFlow[] = ['order_close'];

/**
 * What a hook adds to the one statement that books its flow's movement, so that its work costs
 * no round trip of its own: `ctes` are CTEs appended to the statement's WITH list (`name as
 * (...)`, comma-separated, named with the hook's own prefix), which read the names the flow's
 * statement documents; `answer` is a SQL expression over them whose value (json) the hook's
 * `after` finds in `posting.answers[hook name]`. What a part writes commits with the movement.
 *
 * `before`, when given, are CTEs that run before the booking, once the account is locked: what
 * a part must know before anything is booked (whether its hook's `after` will have work, see
 * PostingIdleGuard.withPart). They read the names the flow's statement documents for that point.
 *
 * A part costs the statement's planning on every movement, so a path that read the account
 * before its statement leaves out the parts whose `applies` says that account has nothing for
 * them. Such a read is not under the lock: the hook's `after` then finds no answer of its own
 * and, when the locked account says otherwise, does the work itself.
 */
export interface PostingStatementPart {
  before?: string;
  ctes: string;
  answer: string;
  applies(account: AccountAsRead): boolean;
}

/**
 * The account as a path read it before its statement, without the lock: what a part's
 * `applies` and a guard's `likely` judge by. `referred` is undefined when the read did not
 * say, and then nothing may be concluded from it.
 */
export type AccountAsRead = Pick<PostedAccount, 'credit' | 'referred'>;

/**
 * When a hook's `after` (and its statement part) has nothing to do with a movement of a
 * STATEMENT_FLOWS flow, so that a movement none of its hooks has work for is booked by its one
 * statement alone, with no transaction around it. `sql` is a condition over `a`, the account
 * row locked before the booking (every column of `accounts`; the other tables as of the
 * statement's start): true when the hook would book, write and answer nothing for the movement.
 * The statement books only while every hook's condition holds under the lock, and otherwise
 * books nothing, and the path runs the movement with its hooks in a transaction. `likely`
 * tells from the account as the path read it before the lock whether the condition should
 * hold: when it says no, the path goes to its transaction at once; without it, the path tries.
 *
 * A hook whose statement part has `before` CTEs may have work the one statement can do (its
 * part's) and work only its `after` can: `withPart` is then a condition over those CTEs, true
 * when its `after` would do nothing for the movement, and the statement keeps the part and
 * books (the part's writes with it) only while that condition holds. `sql` stands alone when
 * the part is left out (see PostingStatementPart.applies).
 *
 * A hook with an `after` on such a flow and no guard forces the transaction on every movement
 * of the flow: a hook nobody taught the guard is never skipped.
 */
export interface PostingIdleGuard {
  sql: string;
  withPart?: string;
  likely?(account: AccountAsRead): boolean;
}

/**
 * Whether the account's customer trades under an introducing broker (attributed to one, or is
 * one itself), as SQL over its `customer_id` column: what `PostedAccount.referred` says.
 */
export const referredSql = (customerId: string): string =>
  `(exists (select 1 from customers c where c.id = ${customerId} and c.partner_id is not null)
    or exists (select 1 from partners p where p.customer_id = ${customerId}))`;

/** One money movement on one account, as a hook sees it: the same object in both phases. */
export interface Posting {
  flow: PostingFlow;
  /** Locked in the posting's transaction; before the booking, as it was read. */
  account: PostedAccount;
  /** Signed decimal text in the account's currency: negative when money leaves. */
  amount: string;
  reference: { type: string; id: string };
  /** What the request declared beyond the movement itself (a confirmation a hook asks for). */
  request?: Readonly<Record<string, unknown>>;
  /** What each hook's statement part answered, by hook name; no key when its part was left out (see PostingStatementPart). */
  answers?: Readonly<Record<string, unknown>>;
}

/**
 * Policy on a money path, run inside the posting's transaction on its connection (`run`).
 * `before` runs once the account is locked and before anything is booked: it refuses by
 * throwing an AppError (a 4xx), and then nothing of the request is written. `after` runs once
 * the movement is booked: it may book more through this module and record events, and what
 * it writes commits or rolls back with the movement. A hook reads the locked row first and
 * returns at once when it has nothing to do, so a path it does not concern pays no round trip.
 */
export interface PostingHook {
  readonly name: string;
  readonly flows: readonly PostingFlow[];
  /** Work folded into the booking statement of its flows (only STATEMENT_FLOWS take one). */
  readonly statementPart?: PostingStatementPart;
  /** When it has nothing to do with a movement of its flows (only STATEMENT_FLOWS take one). */
  readonly idleWhen?: PostingIdleGuard;
  before?(run: RunBound, posting: Posting): Promise<void>;
  after?(run: RunBound, posting: Posting): Promise<void>;
}

type Phase = 'before' | 'after';

/**
 * The installed hooks by flow and phase. Process-wide on purpose: every tier and every path
 * that moves money must apply the same policy, and a path handed its hooks as an argument
 * could be called without them. The composition root installs them once at start-up.
 */
let installed = index([]);
let parts = partsOf([]);
let guards = guardsOf([]);

/** A named statement part of an installed hook. */
export interface InstalledStatementPart extends PostingStatementPart {
  hook: string;
}

function partsOf(hooks: readonly PostingHook[]): Map<PostingFlow, readonly InstalledStatementPart[]> {
  const byFlow = new Map<PostingFlow, readonly InstalledStatementPart[]>();
  for (const flow of STATEMENT_FLOWS)
    byFlow.set(
      flow,
      hooks.flatMap((h) => (h.statementPart && h.flows.includes(flow) ? [{ hook: h.name, ...h.statementPart }] : [])),
    );
  return byFlow;
}

/** A named idle guard of an installed hook. */
export interface InstalledIdleGuard extends PostingIdleGuard {
  hook: string;
}

/** A flow's guards, or null when one of its `after` hooks has none (the flow then always takes its transaction). */
function guardsOf(hooks: readonly PostingHook[]): Map<PostingFlow, readonly InstalledIdleGuard[] | null> {
  const byFlow = new Map<PostingFlow, readonly InstalledIdleGuard[] | null>();
  for (const flow of STATEMENT_FLOWS) {
    const after = hooks.filter((h) => h.flows.includes(flow) && h.after !== undefined);
    byFlow.set(flow, after.every((h) => h.idleWhen) ? after.map((h) => ({ hook: h.name, ...h.idleWhen! })) : null);
  }
  return byFlow;
}

function index(hooks: readonly PostingHook[]): Map<string, PostingHook[]> {
  const byKey = new Map<string, PostingHook[]>();
  for (const flow of POSTING_FLOWS)
    for (const phase of ['before', 'after'] as const)
      byKey.set(
        `${phase}:${flow}`,
        hooks.filter((h) => h.flows.includes(flow) && h[phase] !== undefined),
      );
  return byKey;
}

/** Installs the service's posting hooks, in the order they run; names must be unique. */
export function installPostingHooks(hooks: readonly PostingHook[]): void {
  const names = hooks.map((h) => h.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice) throw new Error(`posting hook ${twice} is installed twice`);
  // A part on a flow whose path books in several statements would never run.
  const stray = hooks.find((h) => h.statementPart && h.flows.some((f) => !STATEMENT_FLOWS.includes(f)));
  if (stray) throw new Error(`posting hook ${stray.name} has a statement part on a flow that takes none`);
  const strayGuard = hooks.find((h) => h.idleWhen && h.flows.some((f) => !STATEMENT_FLOWS.includes(f)));
  if (strayGuard) throw new Error(`posting hook ${strayGuard.name} has an idle guard on a flow that takes none`);
  // A guard that rides with its part reads the part's `before` CTEs.
  const riderless = hooks.find((h) => h.idleWhen?.withPart !== undefined && !h.statementPart?.before);
  if (riderless) throw new Error(`posting hook ${riderless.name} has a guard over a part with no before CTEs`);
  // Its answer is keyed by the hook's name in SQL text.
  const unnamed = hooks.find((h) => h.statementPart && !/^[a-z_]+$/.test(h.name));
  if (unnamed) throw new Error(`posting hook ${unnamed.name} with a statement part needs a name of a-z and _`);
  installed = index(hooks);
  parts = partsOf(hooks);
  guards = guardsOf(hooks);
}

/**
 * The idle guards of a flow's `after` hooks (see PostingIdleGuard), in installation order: the
 * same array until hooks are installed again; null when a hook of the flow has none.
 */
export function postingIdleGuards(flow: PostingFlow): readonly InstalledIdleGuard[] | null {
  return guards.get(flow) ?? null;
}

/**
 * The installed hooks' parts of a flow's booking statement, in installation order: the same
 * array until hooks are installed again, so a path may build its statement once per array.
 */
export function postingStatementParts(flow: PostingFlow): readonly InstalledStatementPart[] {
  return parts.get(flow) ?? [];
}

/** Whether any hook runs in this phase of this flow: a path may skip its transaction's extra work when none does. */
export function hasPostingHooks(phase: Phase, flow: PostingFlow): boolean {
  return installed.get(`${phase}:${flow}`)!.length > 0;
}

async function runHooks(phase: Phase, run: RunBound, posting: Posting): Promise<void> {
  for (const hook of installed.get(`${phase}:${posting.flow}`)!) await hook[phase]!(run, posting);
}

/** Runs the `before` hooks of the posting's flow (see PostingHook). */
export function beforePosting(run: RunBound, posting: Posting): Promise<void> {
  return runHooks('before', run, posting);
}

/** Runs the `after` hooks of the posting's flow (see PostingHook). */
export function afterPosting(run: RunBound, posting: Posting): Promise<void> {
  return runHooks('after', run, posting);
}

/** A locked account entity as a posting sees it. */
export function postedAccount(account: Account): PostedAccount {
  return {
    id: account.id,
    login: account.login,
    customerId: account.customer?.id ?? null,
    kind: account.kind,
    currency: account.currency,
    balance: account.balance,
    credit: account.credit,
    reserved: account.reserved,
  };
}

/**
 * The hooks of a posting inside an ORM transaction: the unit of work is flushed first for the
 * `after` phase, so what a hook reads by SQL includes the booking it follows.
 */
export async function runPostingHooks(tx: EntityManager, phase: Phase, posting: Posting): Promise<void> {
  if (!hasPostingHooks(phase, posting.flow)) return;
  if (phase === 'after') await tx.flush();
  await runHooks(phase, (statement) => executeBoundInTransaction(tx, statement), posting);
}
