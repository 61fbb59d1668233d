import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * METRICS_TOKEN: when set, `/metrics` of the API and of a worker answers only
 * `Authorization: Bearer <token>`. Unset, it answers anyone only where `open` (METRICS_PUBLIC,
 * by default outside production). Queue names, backlog and error rates tell an outsider how
 * the broker is doing, and a scrape costs Redis round trips. Both sides are hashed first so the
 * comparison takes the same time whatever the length of a guess.
 */
export function metricsAllowed(authorization: string | undefined, token: string | undefined, open: boolean): boolean {
  if (token === undefined) return open;
  const match = /^Bearer ([\x21-\x7e]+)$/i.exec(authorization ?? '');
  if (!match) return false;
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(match[1]!), digest(token));
}

export const METRICS_REFUSED =
  'This /metrics needs METRICS_TOKEN as a Bearer token (in production, set METRICS_TOKEN, or METRICS_PUBLIC=true to open it)';
