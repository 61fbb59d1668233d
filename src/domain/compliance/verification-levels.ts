import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { DOCUMENT_TYPES, type DocumentType } from '../../entities/customer-document.entity';
import { VerificationLevel } from '../../entities/verification-level.entity';
import { executeNamed } from '../../db/bound-statement';
import { AppError, fieldError } from '../../platform/errors';
import { money } from '../../platform/decimal';
import { recordAudit } from '../audit/audit';
import type { StaffCaller } from '../../platform/caller';
import { MoneyText } from '../../platform/money-text';
import { LIST_LEVELS } from './compliance.queries';

/** Levels run from 0 (every new customer) to 3. */
export const LEVELS = [0, 1, 2, 3] as const;
export const MAX_LEVEL = 3;

export const VerificationLevelSchema = z.object({
  level: z.int().min(0).max(MAX_LEVEL),
  required_documents: z
    .array(z.enum(DOCUMENT_TYPES))
    .describe('Approved documents of these types lift a customer to this level (none: reached only when staff set it)'),
  can_trade: z.boolean().describe('Open orders, place pending orders and transfer between accounts'),
  can_withdraw: z.boolean().describe('Request withdrawals and prop payouts'),
  max_deposit_per_day: MoneyText.nullable().describe(
    'Deposits per UTC day, per currency of the accounts credited; null: no limit',
  ),
  max_withdrawal_per_day: MoneyText.nullable().describe(
    'Withdrawals (pending and completed) per UTC day, in the wallet currency; null: no limit',
  ),
  max_withdrawal_per_month: MoneyText.nullable().describe(
    'Withdrawals (pending and completed) per UTC calendar month, in the wallet currency; null: no limit',
  ),
  updated_at: z.iso.datetime(),
});
export type VerificationLevelView = z.output<typeof VerificationLevelSchema>;

export const VerificationLevelListSchema = z.object({ items: z.array(VerificationLevelSchema) });

/** One level's terms as the code uses them. */
export interface LevelTerms {
  level: number;
  requiredDocuments: DocumentType[];
  canTrade: boolean;
  canWithdraw: boolean;
  maxDepositPerDay: string | null;
  maxWithdrawalPerDay: string | null;
  maxWithdrawalPerMonth: string | null;
  updatedAt: Date;
}

export function levelView(t: LevelTerms): VerificationLevelView {
  return {
    level: t.level,
    required_documents: t.requiredDocuments,
    can_trade: t.canTrade,
    can_withdraw: t.canWithdraw,
    max_deposit_per_day: t.maxDepositPerDay,
    max_withdrawal_per_day: t.maxWithdrawalPerDay,
    max_withdrawal_per_month: t.maxWithdrawalPerMonth,
    updated_at: t.updatedAt.toISOString(),
  };
}

interface LevelRow {
  level: number;
  required_documents: DocumentType[];
  can_trade: boolean;
  can_withdraw: boolean;
  max_deposit_per_day: string | null;
  max_withdrawal_per_day: string | null;
  max_withdrawal_per_month: string | null;
  updated_at: Date | string;
}

const termsOf = (r: LevelRow): LevelTerms => ({
  level: Number(r.level),
  requiredDocuments: r.required_documents,
  canTrade: r.can_trade,
  canWithdraw: r.can_withdraw,
  maxDepositPerDay: r.max_deposit_per_day === null ? null : money(r.max_deposit_per_day).toFixed(2),
  maxWithdrawalPerDay: r.max_withdrawal_per_day === null ? null : money(r.max_withdrawal_per_day).toFixed(2),
  maxWithdrawalPerMonth: r.max_withdrawal_per_month === null ? null : money(r.max_withdrawal_per_month).toFixed(2),
  updatedAt: new Date(r.updated_at),
});

/** Every level's terms, read now (in the caller's transaction when there is one). */
export async function readLevels(em: EntityManager): Promise<LevelTerms[]> {
  return (await executeNamed<LevelRow>(em, LIST_LEVELS.bind({}))).map(termsOf);
}

/** How long a process trusts its copy of the levels when another process may have changed them. */
export const LEVELS_CACHE_MS = 1000;

/**
 * The levels as this process last read them, so the order-open path, when no level refuses
 * trading (the defaults), adds no query at all. The process that changes a level drops its
 * copy at once; the others read again within LEVELS_CACHE_MS. The money paths (withdrawals,
 * deposits) do not rely on this copy: they read the customer's terms in their own
 * transaction, so a limit holds from the moment its change commits.
 */
export class VerificationLevels {
  private copy: { at: number; levels: Promise<LevelTerms[]> } | undefined;

  constructor(private readonly ttlMs = LEVELS_CACHE_MS) {}

  current(em: EntityManager): Promise<LevelTerms[]> {
    const now = Date.now();
    if (this.copy && now - this.copy.at < this.ttlMs) return this.copy.levels;
    const levels = readLevels(em.fork() as EntityManager);
    const copy = { at: now, levels };
    this.copy = copy;
    levels.catch(() => {
      if (this.copy === copy) this.copy = undefined;
    });
    return levels;
  }

  invalidate(): void {
    this.copy = undefined;
  }
}

export interface LevelInput {
  required_documents: DocumentType[];
  can_trade: boolean;
  can_withdraw: boolean;
  max_deposit_per_day?: number | null | undefined;
  max_withdrawal_per_day?: number | null | undefined;
  max_withdrawal_per_month?: number | null | undefined;
}

const limitText = (v: number | null | undefined) => (v === null || v === undefined ? null : money(v).toFixed(2));

/**
 * PUT /api/admin/verification-levels/{level}: replaces the level's terms (a limit left out is
 * no limit), audited. Level 0 is where every customer starts: it requires no documents.
 */
export async function setLevel(em: EntityManager, actor: StaffCaller, level: number, input: LevelInput): Promise<LevelTerms> {
  if (level === 0 && input.required_documents.length > 0)
    throw fieldError('body', ['required_documents'], 'Level 0 is where every customer starts: it requires no documents');
  const daily = input.max_withdrawal_per_day;
  const monthly = input.max_withdrawal_per_month;
  if (daily !== null && daily !== undefined && monthly !== null && monthly !== undefined && daily > monthly)
    throw fieldError('body', ['max_withdrawal_per_day'], 'The daily withdrawal limit exceeds the monthly one');
  return em.transactional(async (tx) => {
    const row = await tx.findOne(VerificationLevel, { level }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!row) throw new AppError(404, 'NOT_FOUND', 'Verification level not found');
    const before = levelView(entityTerms(row));
    row.requiredDocuments = [...new Set(input.required_documents)];
    row.canTrade = input.can_trade;
    row.canWithdraw = input.can_withdraw;
    row.maxDepositPerDay = limitText(input.max_deposit_per_day);
    row.maxWithdrawalPerDay = limitText(daily);
    row.maxWithdrawalPerMonth = limitText(monthly);
    row.updatedAt = new Date();
    const terms = entityTerms(row);
    recordAudit(tx, actor, {
      action: 'verification_level.updated',
      entityType: 'verification_level',
      entityId: String(level),
      before,
      after: levelView(terms),
    });
    return terms;
  });
}

function entityTerms(row: VerificationLevel): LevelTerms {
  return termsOf({
    level: row.level,
    required_documents: row.requiredDocuments as DocumentType[],
    can_trade: row.canTrade,
    can_withdraw: row.canWithdraw,
    max_deposit_per_day: row.maxDepositPerDay ?? null,
    max_withdrawal_per_day: row.maxWithdrawalPerDay ?? null,
    max_withdrawal_per_month: row.maxWithdrawalPerMonth ?? null,
    updated_at: row.updatedAt,
  });
}
