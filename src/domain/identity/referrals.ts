import type { EntityManager } from '@mikro-orm/postgresql';

/** The partner a referral names: its id, its code, and the customer who is that partner. */
export interface ReferredPartner {
  id: string;
  code: string;
  customerId: string;
}

/**
 * Finds the partner a sign-up's `ref`, a lead's partner code or a promo code names. The partner
 * programmes install it at start-up (src/policy.ts); the paths that create or attribute
 * customers ask here, so they need not know the programmes. Until then nothing resolves.
 */
export type ReferralResolver = (em: EntityManager, ref: string) => Promise<ReferredPartner | null>;

let installed: ReferralResolver = () => Promise.resolve(null);

export function installReferralResolver(resolver: ReferralResolver): void {
  installed = resolver;
}

/** The partner `ref` names, or null (an unknown reference is not an error: sign-up says nothing about it). */
export function resolveReferral(em: EntityManager, ref: string | null | undefined): Promise<ReferredPartner | null> {
  return ref ? installed(em, ref) : Promise.resolve(null);
}
