import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Account } from '../../entities/account.entity';
import {
  LEDGER_BUCKETS,
  LEDGER_KINDS,
  LedgerEntry,
  type LedgerBucket,
  type LedgerKind,
} from '../../entities/ledger-entry.entity';
import { MoneyText } from '../../platform/money-text';
import { executeNamed } from '../../db/bound-statement';
import { DEPOSITED_SINCE, LEDGER_MISMATCHES, ORDER_CHARGES } from './ledger.queries';

export const LedgerSchema = z.object({
  id: z.uuid(),
  seq: z.int().describe('Booking order: rows are numbered as they are booked, and balance_after chains in this order'),
  kind: z.enum(LEDGER_KINDS),
  bucket: z.enum(LEDGER_BUCKETS).describe('What the row moves: the balance, or the non-withdrawable credit'),
  amount: MoneyText,
  balance_after: MoneyText.describe("What the row's bucket holds after it"),
  reference_type: z.string().nullable(),
  reference_id: z.string().nullable(),
  comment: z.string().nullable(),
  created_at: z.iso.datetime(),
});
type LedgerView = z.output<typeof LedgerSchema>;

export function ledgerView(r: LedgerEntry): LedgerView {
  return {
    id: r.id,
    seq: Number(r.seq),
    kind: r.kind,
    bucket: r.bucket,
    amount: r.amount,
    balance_after: r.balanceAfter,
    reference_type: r.referenceType ?? null,
    reference_id: r.referenceId ?? null,
    comment: r.comment ?? null,
    created_at: r.createdAt.toISOString(),
  };
}

/**
 * Appends one ledger row through the unit of work; posting.ts's postToLedger is its caller,
 * which changes the balance the row records in the same step.
 */
export function appendLedgerRow(
  em: EntityManager,
  row: Pick<LedgerEntry, 'kind' | 'bucket' | 'amount' | 'balanceAfter' | 'referenceType' | 'referenceId' | 'comment'> & {
    account: Account;
  },
): LedgerEntry {
  return em.create(LedgerEntry, row);
}

/**
 * An account's first deposit (or, for a challenge's account, its funding), or null: a prop
 * account's starting balance. Booking order is `seq`, drawn
 * while the account row is locked, so "first" is stable.
 */
export async function firstDeposit(em: EntityManager, accountId: string): Promise<string | null> {
  const row = await em.findOne(
    LedgerEntry,
    { account: accountId, kind: { $in: ['deposit', 'challenge_funding'] } },
    { orderBy: { seq: 'asc' } },
  );
  return row?.amount ?? null;
}

/** What the customer deposited into its accounts in `currency` since `since` (decimal text). */
export async function depositedSince(em: EntityManager, customerId: string, currency: string, since: Date): Promise<string> {
  const [row] = await executeNamed<{ total: string }>(em, DEPOSITED_SINCE.bind({ customer_id: customerId, currency, since }));
  return row?.total ?? '0';
}

/**
 * One ledger row as SQL expressions of the statement that books it: `:named` parameters, or
 * columns of that statement's own CTEs. `kind` and `referenceType` are literals.
 */
export interface LedgerRowSql {
  id: string;
  bookedAt: string;
  accountId: string;
  kind: LedgerKind;
  /** The bucket the row moves (the balance unless said): the statement's update must change the same one. */
  bucket?: LedgerBucket;
  amount: string;
  /** The balance the row leaves: the column the same statement's balance update returns. */
  balanceAfter: string;
  referenceType: string;
  referenceId: string;
  comment: string;
  /** The CTE the row is selected from: no row is booked when it matched nothing. */
  from: string;
}

const LEDGER_KIND_SET: ReadonlySet<string> = new Set(LEDGER_KINDS);

/**
 * The ledger's insert as the body of a data-modifying CTE, for the hot paths (a transfer, a
 * close) that change a balance and book it in one statement, one round trip. The rules of
 * postToLedger (posting.ts) hold for its caller: the same statement updates the balance (which locks the
 * row) and passes the balance it returns as `balanceAfter`. Answers `returning id`, one row per
 * booked row. This module is the only code that names the ledger's columns.
 */
export function ledgerInsertSql(rows: readonly LedgerRowSql[]): string {
  const selects = rows.map((r) => {
    if (!LEDGER_KIND_SET.has(r.kind)) throw new Error(`unknown ledger kind ${r.kind}`);
    if (!/^[a-z_]+$/.test(r.referenceType)) throw new Error(`bad ledger reference type ${r.referenceType}`);
    return (
      `select ${r.id}, ${r.bookedAt}, ${r.bookedAt}, ${r.accountId}, '${r.kind}', '${r.bucket ?? 'balance'}', ${r.amount}, ${r.balanceAfter}, ` +
      `'${r.referenceType}', ${r.referenceId}, ${r.comment} from ${r.from}`
    );
  });
  return `insert into ledger_entries (id, created_at, updated_at, account_id, kind, bucket, amount, balance_after, reference_type, reference_id, comment)
  ${selects.join('\n  union all\n  ')}
  returning id`;
}

export interface LedgerMismatch {
  login: string;
  bucket: LedgerBucket;
  /** What the account's bucket holds (its balance or its credit). */
  balance: string;
  ledger_sum: string;
}

/** Accounts whose balance or credit differs from the sum of that bucket's ledger rows: always empty, or something is broken. */
export async function findLedgerMismatches(em: EntityManager): Promise<LedgerMismatch[]> {
  return executeNamed<LedgerMismatch>(em, LEDGER_MISMATCHES.bind({}));
}

/** What orders were charged so far: commission and swap, each the signed sum of its rows (decimal text). */
export interface BookedCharges {
  commission: string;
  swap: string;
}

/** The commission and swap booked for each ticket, by ticket (one read; an order with none maps to zeros). */
export async function bookedCharges(em: EntityManager, tickets: readonly string[]): Promise<Map<string, BookedCharges>> {
  const out = new Map<string, BookedCharges>(tickets.map((t) => [t, { commission: '0.00', swap: '0.00' }]));
  if (tickets.length === 0) return out;
  const rows = await executeNamed<{ ticket: string } & BookedCharges>(
    em,
    ORDER_CHARGES.bind({ tickets: JSON.stringify(tickets) }),
  );
  for (const r of rows) out.set(r.ticket, { commission: r.commission, swap: r.swap });
  return out;
}
