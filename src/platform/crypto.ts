import { createHash, randomBytes } from 'node:crypto';

/** `bytes` of randomness as base64url text (32 bytes = 256 bits). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** For high-entropy secrets (tokens, backup codes), a plain SHA-256 is the right hash: there is nothing to brute-force. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
