import { Check, Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { decimalText, MONEY_COLUMN } from './column-types';

/**
 * What a customer of one verification level (0 to 3) may do, and which approved documents
 * lift a customer to it. The migration writes the four rows with today's behaviour (trade
 * and withdraw, no limits, no documents); brokers change them with
 * PUT /api/admin/verification-levels/{level}. A null limit is no limit. Limits are money in
 * the currency of the account concerned (see domain/compliance/limits.ts).
 */
@Entity({ tableName: 'verification_levels' })
@Check({ name: 'verification_levels_level_range', expression: 'level >= 0 and level <= 3' })
export class VerificationLevel {
  @PrimaryKey({ type: 'smallint', autoincrement: false })
  level!: number;

  /** Document types (`identity`, `address`, `selfie`, `payment_method`) whose approval reaches this level. */
  @Property({ type: 'json' })
  requiredDocuments: string[] = [];

  @Property({ type: 'boolean' })
  canTrade = true;

  @Property({ type: 'boolean' })
  canWithdraw = true;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN, nullable: true })
  maxDepositPerDay?: string | null = null;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN, nullable: true })
  maxWithdrawalPerDay?: string | null = null;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN, nullable: true })
  maxWithdrawalPerMonth?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  updatedAt: Date = new Date();
}
