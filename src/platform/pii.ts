/**
 * Personal data as staff without `view_customer_pii` see it: enough to recognise a customer
 * on the phone, not enough to contact one. Applied to every answer and export that carries a
 * customer's email or phone.
 */
export const PII_PERMISSION = 'view_customer_pii';

/** `john@example.com` → `j***@example.com`. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return `${email.slice(0, 1)}***`;
  return `${email.slice(0, 1)}***${email.slice(at)}`;
}

/**
 * `+44 20 7946 0912` → `+44******12`: the first 3 and last 2 characters, and six stars between
 * whatever the number's length or spacing, as the email keeps three (the mask tells nothing of
 * what it hides). A number too short to keep 5 characters of is all stars.
 */
export function maskPhone(phone: string): string {
  const compact = phone.replace(/[\s()-]/g, '');
  if (compact.length <= 5) return '******';
  return `${compact.slice(0, 3)}******${compact.slice(-2)}`;
}

/** Whether a caller (by its permissions; a customer passes none and sees its own data whole) sees personal data unmasked. */
export function seesPii(permissions: ReadonlySet<string> | undefined): boolean {
  return permissions === undefined || permissions.has(PII_PERMISSION);
}
