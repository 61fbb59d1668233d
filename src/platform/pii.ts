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

/** `+441234567812` → `+44*******12`: the first 3 and last 2 characters kept, each digit between masked. */
export function maskPhone(phone: string): string {
  if (phone.length <= 5) return '*'.repeat(phone.length);
  return phone.slice(0, 3) + phone.slice(3, -2).replace(/[0-9]/g, '*') + phone.slice(-2);
}

/** Whether a caller (by its permissions; a customer passes none and sees its own data whole) sees personal data unmasked. */
export function seesPii(permissions: ReadonlySet<string> | undefined): boolean {
  return permissions === undefined || permissions.has(PII_PERMISSION);
}
