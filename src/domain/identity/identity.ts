import type { StaffDataScope } from '../../platform/caller';
import type { RedisClient } from '../../platform/redis';
import type { PrincipalType } from '../../entities/session.entity';
import type { SecretBox } from '../../platform/secret-box';
import { RESET_LIMITS } from './reset-limits';
import { AccessTokens } from './access-tokens';
import { AuthCache } from './auth-cache';
import { LoginThrottle } from './login-throttle';
import { RequestThrottle } from './request-throttle';
import { StreamTickets } from './stream-tickets';

export interface SessionFacts {
  principalId: string;
  /** Checked against the token's `type` claim: the cache key is the session id alone. */
  principalType: PrincipalType;
  /** Staff permissions; empty for customers. */
  permissions: string[];
  /** A staff user's data scope, cached and refreshed with the permissions; absent for customers. */
  dataScope?: StaffDataScope;
}

export interface ApiTokenFacts {
  tokenId: string;
  userId: string;
  /** The token's scopes that its issuer still holds. */
  permissions: string[];
  /** The issuer's data scope: a token sees what its issuer sees. */
  dataScope?: StaffDataScope;
}

/** Promo code validate plus redeem attempts a customer may make: 10 an hour, so codes cannot be guessed. */
export const PROMO_ATTEMPTS = { limit: 10, windowSeconds: 3600 } as const;

/** The identity parts built once per process. */
export interface Identity {
  accessTokens: AccessTokens;
  sessions: AuthCache<SessionFacts>;
  apiTokens: AuthCache<ApiTokenFacts>;
  throttle: LoginThrottle;
  /** Password-reset requests, per email from one client address and per client address (RESET_LIMITS). */
  resetThrottle: RequestThrottle;
  /** Promo code validate and redeem attempts, per customer (PROMO_ATTEMPTS). */
  promoThrottle: RequestThrottle;
  /** Self-registrations per client address, in one-hour windows (the limit is a broker setting). */
  registrationThrottle: RequestThrottle;
  /** Seals TOTP seeds at rest. */
  totpBox: SecretBox;
  /** Single-use tickets that open one event stream (`?ticket=`). */
  streamTickets: StreamTickets;
  defaultAccessTokenTtl: number;
}

/** The configuration the identity parts are built from, handed in by the composition root. */
export interface IdentityOptions {
  /** Signs and checks access tokens. */
  jwt: { secret: string; issuer: string; audience: string };
  /** Prefix of the Redis keys of the auth caches and the throttles (QUEUE_PREFIX). */
  keyPrefix: string;
  /** An access token's lifetime when the broker settings name none. */
  accessTokenTtlSeconds: number;
}

export function createIdentity(options: IdentityOptions, redis: RedisClient, totpBox: SecretBox): Identity {
  const { jwt, keyPrefix } = options;
  return {
    accessTokens: new AccessTokens(jwt.secret, jwt.issuer, jwt.audience),
    sessions: new AuthCache<SessionFacts>(redis, keyPrefix, 'session'),
    apiTokens: new AuthCache<ApiTokenFacts>(redis, keyPrefix, 'apitoken'),
    throttle: new LoginThrottle(redis, keyPrefix),
    resetThrottle: new RequestThrottle(redis, keyPrefix, 'password-reset', RESET_LIMITS.windowSeconds),
    promoThrottle: new RequestThrottle(redis, keyPrefix, 'promo', PROMO_ATTEMPTS.windowSeconds),
    registrationThrottle: new RequestThrottle(redis, keyPrefix, 'registration', 3600),
    totpBox,
    streamTickets: new StreamTickets(redis, keyPrefix),
    defaultAccessTokenTtl: options.accessTokenTtlSeconds,
  };
}
