import { maskEmail, maskPhone, seesPii } from '../../src/platform/pii';

describe('personal data masks', () => {
  test('when an email is masked, then its first character and domain stay and three stars stand for the rest', () => {
    expect(maskEmail('john.smith@example.com')).toBe('j***@example.com');
    expect(maskEmail('j@example.com')).toBe('j***@example.com');
    expect(maskEmail('nodomain')).toBe('n***');
  });

  test('when a phone is masked, then its first 3 and last 2 characters stay, with six stars between whatever its length or spacing', () => {
    expect(maskPhone('+441234567812')).toBe('+44******12');
    expect(maskPhone('+44 20 7946 0912')).toBe('+44******12');
    expect(maskPhone('+1 (555) 010-9999')).toBe('+15******99');
    expect(maskPhone('12345')).toBe('******');
  });

  test('when permissions are read, then only view_customer_pii (or a customer, who passes none) sees data whole', () => {
    expect(seesPii(new Set(['view_customers']))).toBe(false);
    expect(seesPii(new Set(['view_customer_pii']))).toBe(true);
    expect(seesPii(undefined)).toBe(true);
  });
});
