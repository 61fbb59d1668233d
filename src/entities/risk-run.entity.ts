import { Entity, Enum, Index, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

const RISK_RUN_KINDS = ['preview', 'apply'] as const;
export type RiskRunKind = (typeof RISK_RUN_KINDS)[number];
export const RISK_RUN_STATUSES = ['running', 'completed', 'failed'] as const;
export type RiskRunStatus = (typeof RISK_RUN_STATUSES)[number];

/** Counts per class, as a run records them once it has classified. */
export interface RiskCounts {
  toxic: number;
  watchlist: number;
  normal: number;
  unclassified: number;
}

/**
 * One classification of the trading accounts by a risk rule, computed by a worker: a preview
 * (which writes nothing else) or the apply run of a saved rule. The API records
 * it with the rule input and the window fixed at request time, so a retried job classifies
 * the same window; the worker writes the outcome here, and the API answers from this row.
 */
@Entity({ tableName: 'risk_runs' })
@Index({ properties: ['ruleId', 'createdAt'] })
export class RiskRun extends BaseEntity<
  'status' | 'ruleId' | 'counts' | 'accountsEvaluated' | 'completedAt' | 'requestedBy' | 'error'
> {
  @Enum({ items: [...RISK_RUN_KINDS], type: 'string' })
  kind!: RiskRunKind;

  /** The saved rule an apply run applies; null for a preview. */
  @Property({ type: 'uuid', nullable: true })
  ruleId?: string | null = null;

  /** The rule input as validated. */
  @Property({ type: 'json' })
  input!: Record<string, unknown>;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  windowStart!: Date;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  windowEnd!: Date;

  @Enum({ items: [...RISK_RUN_STATUSES], type: 'string' })
  status: RiskRunStatus = 'running';

  @Property({ type: 'json', nullable: true })
  counts?: RiskCounts | null = null;

  @Property({ type: 'integer', nullable: true })
  accountsEvaluated?: number | null = null;

  @Property({ type: 'uuid', nullable: true })
  requestedBy?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  completedAt?: Date | null = null;

  /** Why a run failed for good (never a database message, which can quote values). */
  @Property({ type: 'string', length: 500, nullable: true })
  error?: string | null = null;
}
