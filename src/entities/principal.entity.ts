import { Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

/**
 * What staff users and customers share: a login email (stored lower-cased, so uniqueness is
 * case-insensitive), an argon2id password hash, and TOTP state.
 */
export abstract class PrincipalEntity<Optional = never> extends BaseEntity<
  'isActive' | 'totpEnabled' | 'totpSecret' | 'totpPendingSecret' | 'totpLastStep' | Optional
> {
  @Property({ type: 'string', length: 320 })
  email!: string;

  @Property({ type: 'string', length: 255, hidden: true })
  passwordHash!: string;

  @Property({ type: 'boolean' })
  isActive = true;

  @Property({ type: 'boolean' })
  totpEnabled = false;

  /** The TOTP secret, encrypted (AES-256-GCM): it must be readable to verify codes, so it cannot be hashed. */
  @Property({ type: 'text', nullable: true, hidden: true })
  totpSecret?: string | null = null;

  /** A secret from /auth/totp/setup that becomes totpSecret once a code proves the app has it. */
  @Property({ type: 'text', nullable: true, hidden: true })
  totpPendingSecret?: string | null = null;

  /** The last 30-second step a code was accepted for: a code is accepted only for a later step (no replay). */
  @Property({ type: 'integer', nullable: true })
  totpLastStep?: number | null = null;
}
