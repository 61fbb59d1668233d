import { Webhook } from 'standardwebhooks';
import { secretProblem, signedHeaders, signingKey, signPayload } from '../../src/domain/webhooks/signature';

describe('webhook signatures (Standard Webhooks)', () => {
  test('when signing the specification test vector, then the published signature comes out', () => {
    // From the Standard Webhooks specification and its reference libraries' tests.
    const key = signingKey('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
    expect(signPayload(key, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  test('when a whsec_ secret signs, then the standardwebhooks package verifies it', () => {
    const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
    const body = JSON.stringify({
      events: [{ id: 'e1', type: 'order.opened', created_at: '2026-01-01T00:00:00.000Z', data: {} }],
    });
    const headers = signedHeaders(signingKey(secret), 'a-delivery-id', body);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  test('when a plain secret signs, then its UTF-8 bytes are the key the package verifies with', () => {
    const secret = 'a plain secret of twenty-four+ chars: é';
    const body = '{"events":[]}';
    const headers = signedHeaders(signingKey(secret), 'id-2', body);
    expect(new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).verify(body, { ...headers })).toEqual({ events: [] });
    // A changed body fails.
    expect(() => new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).verify(`${body} `, { ...headers })).toThrow();
  });

  test('when a secret is checked, then short ones and malformed whsec_ ones are refused', () => {
    expect(secretProblem('x'.repeat(24))).toBeUndefined();
    expect(secretProblem('x'.repeat(23))).toMatch(/at least 24/);
    expect(secretProblem(`whsec_${Buffer.alloc(32, 7).toString('base64')}`)).toBeUndefined();
    expect(secretProblem('whsec_not base64!')).toMatch(/base64/);
    expect(secretProblem(`whsec_${Buffer.alloc(8, 7).toString('base64')}`)).toMatch(/24 to 64 bytes/);
    expect(secretProblem('y'.repeat(257))).toMatch(/at most 256/);
  });
});
