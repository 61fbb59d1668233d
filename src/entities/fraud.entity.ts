import { Entity, Index, PrimaryKey, Property, Unique } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

/** One named fraud list (blocked_ips, allowed_ips, ...): replaced whole by staff. */
@Entity({ tableName: 'fraud_lists' })
export class FraudList extends BaseEntity {
  @Property({ type: 'string', length: 40 })
  @Unique()
  name!: string;

  @Property({ type: 'json' })
  items!: string[];
}

/**
 * A fraud rule: conditions over the fields of one event, an outcome, a place in the order.
 * `version` rises with every change, so an evaluation names the exact rule text that decided it.
 */
@Entity({ tableName: 'fraud_rules' })
@Index({ properties: ['event', 'position'] })
export class FraudRule extends BaseEntity<'enabled' | 'version' | 'builtinKey'> {
  @Property({ type: 'string', length: 100 })
  name!: string;

  @Property({ type: 'string', length: 20 })
  event!: string;

  @Property({ type: 'string', length: 3 })
  match!: string;

  @Property({ type: 'json' })
  conditions!: Array<{ field: string; op: string; value: unknown }>;

  @Property({ type: 'string', length: 6 })
  action!: string;

  @Property({ type: 'integer' })
  position!: number;

  @Property({ type: 'boolean', default: false })
  enabled: boolean = false;

  @Property({ type: 'integer', default: 1 })
  version: number = 1;

  /** Set on the rules the service ships (disabled): seeded once, then staff own them. */
  @Property({ type: 'string', length: 60, nullable: true })
  @Unique()
  builtinKey?: string | null = null;
}

/**
 * A signal seen at an event: who, from which address and device, with which payment instrument
 * or withdrawal destination (fingerprints only). The links between customers are read from here.
 */
@Entity({ tableName: 'fraud_signals' })
@Index({ properties: ['deviceId', 'customerId'] })
@Index({ properties: ['ip', 'createdAt'] })
@Index({ properties: ['instrument', 'customerId'] })
@Index({ properties: ['destination', 'customerId'] })
@Index({ properties: ['customerId', 'createdAt'] })
export class FraudSignal extends BaseEntity<'deviceId' | 'ip' | 'instrument' | 'destination'> {
  @Property({ type: 'uuid' })
  customerId!: string;

  @Property({ type: 'string', length: 20 })
  event!: string;

  @Property({ type: 'string', length: 128, nullable: true })
  deviceId?: string | null = null;

  @Property({ type: 'string', length: 45, nullable: true })
  ip?: string | null = null;

  @Property({ type: 'string', length: 128, nullable: true })
  instrument?: string | null = null;

  @Property({ type: 'string', length: 64, nullable: true })
  destination?: string | null = null;
}

/**
 * One fraud evaluation, kept so any verdict can be explained and replayed: what decided it (a
 * list, a rule at a version, or the default), the raw signals, and the value of every field an
 * enabled rule of the event read.
 */
@Entity({ tableName: 'fraud_evaluations' })
@Index({ properties: ['event', 'createdAt'] })
@Index({ properties: ['referenceId'] })
export class FraudEvaluation extends BaseEntity<'customerId' | 'ruleId' | 'ruleVersion' | 'referenceType' | 'referenceId'> {
  @Property({ type: 'string', length: 20 })
  event!: string;

  @Property({ type: 'uuid', nullable: true })
  customerId?: string | null = null;

  @Property({ type: 'string', length: 6 })
  decision!: string;

  /** `list:<name>`, `rule` or `default`. */
  @Property({ type: 'string', length: 40 })
  decidedBy!: string;

  @Property({ type: 'uuid', nullable: true })
  ruleId?: string | null = null;

  @Property({ type: 'integer', nullable: true })
  ruleVersion?: number | null = null;

  @Property({ type: 'json' })
  signals!: Record<string, unknown>;

  @Property({ type: 'json' })
  fields!: Record<string, unknown>;

  @Property({ type: 'string', length: 40, nullable: true })
  referenceType?: string | null = null;

  @Property({ type: 'string', length: 64, nullable: true })
  referenceId?: string | null = null;
}

export const FRAUD_CASE_STATUSES = ['open', 'investigating', 'resolved', 'discarded'] as const;
export type FraudCaseStatus = (typeof FRAUD_CASE_STATUSES)[number];

/** A review case about one customer: opened by a `review` outcome (or a reversal), extended by later ones. */
@Entity({ tableName: 'fraud_cases' })
@Index({ properties: ['status', 'createdAt'] })
@Index({ properties: ['customerId', 'status'] })
export class FraudCase extends BaseEntity<
  'status' | 'assigneeId' | 'verdict' | 'actions' | 'note' | 'resolvedAt' | 'resolvedBy'
> {
  @Property({ type: 'uuid' })
  customerId!: string;

  @Property({ type: 'string', length: 14, default: 'open' })
  status: FraudCaseStatus = 'open';

  @Property({ type: 'uuid', nullable: true })
  assigneeId?: string | null = null;

  /** Why it was opened and extended: one line per reason, generic (the evaluation ids point at the detail). */
  @Property({ type: 'json' })
  reasons!: Array<{
    at: string;
    event: string;
    reason: string;
    evaluation_id: string | null;
    reference: { type: string; id: string } | null;
  }>;

  @Property({ type: 'string', length: 10, nullable: true })
  verdict?: string | null = null;

  @Property({ type: 'json', nullable: true })
  actions?: string[] | null = null;

  @Property({ type: 'string', length: 2000, nullable: true })
  note?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  resolvedAt?: Date | null = null;

  @Property({ type: 'uuid', nullable: true })
  resolvedBy?: string | null = null;
}

/**
 * One row: a stamp that changes with every change of the rules or lists. Each process keeps
 * its copy of the rules and lists beside the stamp it read them at, and reads only the stamp
 * at an evaluation (src/domain/fraud/rule-cache.ts). A random stamp rather than a counter, so a
 * copy taken from one database never passes for another's (test databases are clones).
 */
@Entity({ tableName: 'fraud_rules_stamp' })
export class FraudRulesStamp {
  @PrimaryKey({ type: 'integer', autoincrement: false })
  id!: number;

  @Property({ type: 'uuid' })
  stamp!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  changedAt: Date = new Date();
}
