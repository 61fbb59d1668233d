import { createSecretKey, randomUUID, type KeyObject } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { z } from 'zod';
import type { PrincipalType } from '../../entities/session.entity';

export interface AccessClaims {
  sub: string;
  type: PrincipalType;
  sid: string;
  jti: string;
  iat: number;
  exp: number;
}

const ALGORITHM = 'HS256';

/** How many verified tokens are remembered; past it the oldest is forgotten (and verified again if it comes back). */
const VERIFIED_MAX = 10_000;

/**
 * A signature proves who minted a token, not that its claims are well formed: ids must be
 * UUIDs before they reach a query (a `sid` of "x" would otherwise fail in Postgres as a 500).
 */
const ClaimsSchema = z.object({
  sub: z.uuid(),
  type: z.enum(['user', 'customer']),
  sid: z.uuid(),
  jti: z.string().min(1).max(64),
  iat: z.number(),
  exp: z.number(),
});

/**
 * Signs and verifies access tokens. The algorithm, issuer and audience are pinned on
 * verification, so `alg: none`, another algorithm, or a token minted for another service
 * is refused; the key is imported once, not on every call.
 */
export class AccessTokens {
  private readonly key: KeyObject;
  /**
   * Hot path: a client sends the same token on every request until it expires, and checking its
   * signature (an HMAC through WebCrypto, off the event loop and back) cost about a fifth of an
   * authenticated write's CPU. A token's bytes verified once stay valid until its `exp`, so the
   * exact string maps to its claims until then; whether its session still stands is asked on
   * every request all the same (authenticate's session lookup), so a revoked session still fails.
   */
  private readonly verified = new Map<string, AccessClaims>();

  constructor(
    secret: string,
    private readonly issuer: string,
    private readonly audience: string,
  ) {
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  async sign(input: { sub: string; type: PrincipalType; sid: string; ttlSeconds: number }): Promise<string> {
    return new SignJWT({ type: input.type, sid: input.sid })
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setSubject(input.sub)
      .setIssuer(this.issuer)
      .setAudience(this.audience)
      .setIssuedAt()
      .setExpirationTime(`${input.ttlSeconds}s`)
      .setJti(randomUUID())
      .sign(this.key);
  }

  /** The claims of a valid token, or undefined for anything else (never throws on bad input). */
  async verify(token: string): Promise<AccessClaims | undefined> {
    const known = this.verified.get(token);
    // jose's own rule: expired once `exp` is not after the current second.
    if (known && known.exp > Math.floor(Date.now() / 1000)) return known;
    if (known) this.verified.delete(token);
    const claims = await this.verifySignature(token);
    if (claims) {
      if (this.verified.size >= VERIFIED_MAX) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, claims);
    }
    return claims;
  }

  private async verifySignature(token: string): Promise<AccessClaims | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: [ALGORITHM],
        issuer: this.issuer,
        audience: this.audience,
        requiredClaims: ['sub', 'sid', 'jti', 'iat', 'exp'],
        typ: 'JWT',
      });
      const claims = ClaimsSchema.safeParse(payload);
      return claims.success ? claims.data : undefined;
    } catch (err) {
      if (err instanceof joseErrors.JOSEError || err instanceof TypeError) return undefined;
      throw err;
    }
  }
}
