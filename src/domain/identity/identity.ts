import type { RedisClient } from '../../platform/redis';
import type { Config } from '../../config/config';
import type { PrincipalType } from '../../entities/session.entity';
import type { SecretBox } from '../../platform/secret-box';
import { RESET_LIMITS } from './reset-limits';
import { AccessTokens } from './access-tokens';
import { AuthCache } from './auth-cache';
import { LoginThrottle } from './login-throttle';
import { RequestThrottle } from './request-throttle';

export interface SessionFacts {
  principalId: string;
  /** Checked against the token's `type` claim: the cache key is the session id alone. */
  principalType: PrincipalType;
  /** Staff permissions; empty for customers. */
  permissions: string[];
}

export interface ApiTokenFacts {
  tokenId: string;
  userId: string;
  /** The token's scopes that its issuer still holds. */
  permissions: string[];
}

/** The identity parts built once per process. */
export interface Identity {
  accessTokens: AccessTokens;
  sessions: AuthCache<SessionFacts>;
  apiTokens: AuthCache<ApiTokenFacts>;
  throttle: LoginThrottle;
  /** Password-reset requests, per email from one client address and per client address (RESET_LIMITS). */
  resetThrottle: RequestThrottle;
  /** Seals TOTP seeds at rest. */
  totpBox: SecretBox;
  defaultAccessTokenTtl: number;
}

export function createIdentity(config: Config, redis: RedisClient, totpBox: SecretBox): Identity {
  return {
    accessTokens: new AccessTokens(config.jwt.secret, config.jwt.issuer, config.jwt.audience),
    sessions: new AuthCache<SessionFacts>(redis, config.queuePrefix, 'session'),
    apiTokens: new AuthCache<ApiTokenFacts>(redis, config.queuePrefix, 'apitoken'),
    throttle: new LoginThrottle(redis, config.queuePrefix),
    resetThrottle: new RequestThrottle(redis, config.queuePrefix, 'password-reset', RESET_LIMITS.windowSeconds),
    totpBox,
    defaultAccessTokenTtl: config.accessTokenTtlSeconds,
  };
}
