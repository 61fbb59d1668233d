/**
 * What the service answers to GET /health, byte for byte (bar the request id and the date),
 * so the baselines put the same bytes on the wire: the body, its weak ETag as express makes
 * it, and the security headers every answer carries (src/api/middleware/request-stack.ts).
 */
export const HEALTH_BODY = Buffer.from(JSON.stringify({ status: 'ok' }));
// Express sends a weak ETag of the body; the body never changes, so neither does the tag.
export const HEALTH_ETAG = 'W/"f-VaSQ4oDUiZblZNAEkkN+sX+q3Sg"';

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': "default-src 'none';frame-ancestors 'none'",
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Origin-Agent-Cluster': '?1',
  'Referrer-Policy': 'no-referrer',
  'Strict-Transport-Security': 'max-age=31536000; includeSubDomains',
  'X-Content-Type-Options': 'nosniff',
  'X-DNS-Prefetch-Control': 'off',
  'X-Download-Options': 'noopen',
  'X-Frame-Options': 'DENY',
  'X-Permitted-Cross-Domain-Policies': 'none',
  'X-XSS-Protection': '0',
};
