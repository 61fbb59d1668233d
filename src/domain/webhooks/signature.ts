import { Webhook } from 'standardwebhooks';
import { z } from 'zod';

/**
 * Standard Webhooks signing: `webhook-signature: v1,<base64 of
 * HMAC-SHA256("<webhook-id>.<webhook-timestamp>.<body>")>`. The key is the base64-decoded
 * part of a `whsec_` secret, otherwise the secret's UTF-8 bytes. The signature is the
 * `standardwebhooks` package's own (the reference library receivers verify with), given the
 * key as raw bytes: its raw form would read a string key one char code per byte, which is
 * not UTF-8. Proven against the specification's published test vector in
 * test/unit/webhook-signature.test.ts.
 */
export function signingKey(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.from(secret, 'utf8');
}

export function signPayload(key: Buffer, msgId: string, timestampSeconds: number, body: string): string {
  return new Webhook(key, { format: 'raw' }).sign(msgId, new Date(timestampSeconds * 1000), body);
}

interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Fresh timestamp and signature for one attempt; the id stays the delivery's. With more than
 * one key (a rotation's window) one signature per key, space-separated, the current key's first:
 * a Standard Webhooks receiver accepts the message if any of them verifies under its secret.
 */
export function signedHeaders(keys: Buffer | Buffer[], msgId: string, body: string, now = new Date()): SignedHeaders {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': (Array.isArray(keys) ? keys : [keys]).map((k) => signPayload(k, msgId, timestamp, body)).join(' '),
  };
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Why a secret is refused, or undefined: at least 24 characters, or `whsec_` followed by the
 * base64 of 24 to 64 random bytes (the Standard Webhooks form), at most 256 characters.
 */
export function secretProblem(secret: string): string | undefined {
  if (secret.length > 256) return 'The secret must be at most 256 characters';
  if (secret.startsWith('whsec_')) {
    const encoded = secret.slice('whsec_'.length);
    if (!BASE64.test(encoded)) return 'A whsec_ secret must be followed by base64';
    const bytes = Buffer.from(encoded, 'base64').length;
    if (bytes < 24 || bytes > 64) return 'A whsec_ secret must carry 24 to 64 bytes';
    return undefined;
  }
  if (secret.length < 24) return 'The secret must be at least 24 characters, or whsec_ followed by base64';
  return undefined;
}

/**
 * A write-only signing secret as a request field: secretProblem's rule, with the length bounds
 * both forms share in the OpenAPI description so a generated client refuses a short one too
 * (a `whsec_` secret of 24 bytes is 38 characters).
 */
export function signingSecretField(description: string) {
  return z
    .string()
    .superRefine((v, ctx) => {
      const problem = secretProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem, params: { type: 'value_error' } });
    })
    .meta({ minLength: 24, maxLength: 256 })
    .describe(description);
}
