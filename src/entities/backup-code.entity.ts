import { Entity, Enum, Index, Property, Unique } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import type { PrincipalType } from './session.entity';

/** One TOTP backup code, kept only as its SHA-256 (80 random bits); each works once. */
@Entity({ tableName: 'totp_backup_codes' })
@Index({ properties: ['principalType', 'principalId'] })
export class BackupCode extends BaseEntity<'usedAt'> {
  @Enum({ items: ['user', 'customer'], type: 'string' })
  principalType!: PrincipalType;

  @Property({ type: 'uuid' })
  principalId!: string;

  @Property({ type: 'string', length: 64 })
  @Unique()
  codeHash!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  usedAt?: Date | null = null;
}
