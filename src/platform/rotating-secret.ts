import type { SecretBox } from './secret-box';

/** How long a replaced secret stays valid beside its successor (webhook signing, provider callbacks). */
export const PREVIOUS_SECRET_VALID_MS = 24 * 3600 * 1000;

/** A row holding a sealed secret that rotates with an overlap: webhooks, integrations. */
export interface RotatingSecret {
  secretSealed: string;
  previousSecretSealed?: string | null;
  previousSecretExpiresAt?: Date | null;
}

/**
 * A new secret takes effect at once; the one it replaces stays valid beside it for 24 hours, so
 * the other side can move to the new one without a refusal in between. Rotating again within
 * the window keeps only the secret just replaced. The holder's current sealed value must be
 * loaded (it is a lazy column on every row that has one).
 */
export function rotateSealedSecret(holder: RotatingSecret, box: SecretBox, plain: string, now = new Date()): void {
  holder.previousSecretSealed = holder.secretSealed;
  holder.previousSecretExpiresAt = new Date(now.getTime() + PREVIOUS_SECRET_VALID_MS);
  holder.secretSealed = box.seal(plain);
}

/** When the replaced secret stops being valid, or null when there is none still valid. */
export function previousSecretValidUntil(holder: Pick<RotatingSecret, 'previousSecretExpiresAt'>, now = new Date()): Date | null {
  const until = holder.previousSecretExpiresAt;
  return until && until.getTime() > now.getTime() ? until : null;
}
