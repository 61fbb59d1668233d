import { type Ref } from '@mikro-orm/core';
import { Entity, Enum, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Account } from './account.entity';
import { BaseEntity } from './base.entity';
import { bigintText, decimalText, MONEY_COLUMN } from './column-types';
import { Customer } from './customer.entity';
import { PropProgram } from './prop-program.entity';

export const CHALLENGE_STATUSES = ['active', 'passed', 'failed', 'funded'] as const;
export type ChallengeStatus = (typeof CHALLENGE_STATUSES)[number];

export const FAILURE_RULES = ['daily_loss', 'total_loss', 'time_limit'] as const;
export type FailureRule = (typeof FAILURE_RULES)[number];

/** What a failed challenge records: the rule, its threshold and the account at the breach. */
export interface ChallengeFailure {
  rule: FailureRule;
  threshold: string;
  equity: string;
  balance: string;
  at: string;
}

/**
 * One stage of a trader's challenge on its own `prop` account: a phase (`active`, then
 * `passed` or `failed`), or the funded stage after the last phase (`funded`). The status is a
 * state machine moved only by conditional updates (`... where status = 'active'`), so a breach
 * and a pass, or two workers seeing one breach, decide it once. The phase's rules are copied
 * from the program when the stage starts.
 */
@Entity({ tableName: 'prop_challenges' })
@Index({
  name: 'prop_challenges_active_account',
  expression: `create index "prop_challenges_active_account" on "prop_challenges" ("account_id") where "status" = 'active'`,
})
@Index({ properties: ['customer', 'createdAt'] })
export class PropChallenge extends BaseEntity<
  'status' | 'failure' | 'decidedAt' | 'closedOutAt' | 'previous' | 'maxTradingDays' | 'endsAt'
> {
  @ManyToOne({ entity: () => PropProgram, ref: true, deleteRule: 'restrict' })
  program!: Ref<PropProgram>;

  @ManyToOne({ entity: () => Customer, ref: true, deleteRule: 'restrict' })
  customer!: Ref<Customer>;

  @ManyToOne({ entity: () => Account, ref: true, deleteRule: 'restrict' })
  @Unique()
  account!: Ref<Account>;

  @Property({ type: bigintText(), columnType: 'bigint' })
  login!: string;

  /** 1 to the number of phases; the funded stage is the number of phases + 1. */
  @Property({ type: 'integer' })
  phase!: number;

  @Enum({ items: [...CHALLENGE_STATUSES], type: 'string' })
  status: ChallengeStatus = 'active';

  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  initialBalance!: string;

  @Property({ type: decimalText(), columnType: 'numeric(7,2)' })
  profitTargetPct!: string;

  @Property({ type: decimalText(), columnType: 'numeric(5,2)' })
  maxDailyLossPct!: string;

  @Property({ type: decimalText(), columnType: 'numeric(5,2)' })
  maxTotalLossPct!: string;

  @Property({ type: 'string', length: 8 })
  totalLossMode!: 'static' | 'trailing';

  @Property({ type: 'integer' })
  minTradingDays!: number;

  @Property({ type: 'integer', nullable: true })
  maxTradingDays?: number | null = null;

  /** When a phase with max_trading_days fails on time (created_at + that many days). */
  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  endsAt?: Date | null = null;

  /** The larger of balance and equity at the last day start (at the stage's start before the first). */
  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  dayStartEquity!: string;

  /** The UTC date dayStartEquity was taken for. */
  @Property({ type: 'date', columnType: 'date' })
  dayStartDate!: string;

  /** The highest equity seen: moves up with equity, never down. */
  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  highWaterMark!: string;

  @Property({ type: 'json', nullable: true })
  failure?: ChallengeFailure | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  decidedAt?: Date | null = null;

  /** Set once every order of a failed stage is closed (the close-out job); null while one may be open. */
  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  closedOutAt?: Date | null = null;

  /** The stage this one follows; unique, so a passed stage starts its next stage once. */
  @ManyToOne({ entity: () => PropChallenge, ref: true, nullable: true, deleteRule: 'restrict' })
  @Unique()
  previous?: Ref<PropChallenge> | null = null;
}
