import { randomUUID } from 'node:crypto';
import { WebhookBodySchema } from '../../src/domain/webhooks/webhook-body';
import { startReceiver } from '../helpers/webhook-receiver';

const event = {
  id: randomUUID(),
  type: 'order.opened',
  sequence: 4711,
  created_at: '2026-11-26T09:30:00.123Z',
  data: { ticket: '5000001', symbol: 'EURUSD' },
};

describe('the webhook body schema', () => {
  test('when a body has the shape the delivery step builds, then it parses', () => {
    expect(WebhookBodySchema.safeParse({ events: [event] }).success).toBe(true);
  });

  test.each([
    ['an unknown event type', { events: [{ ...event, type: 'order.exploded' }] }],
    ['a field the schema does not name', { events: [{ ...event, extra: 1 }] }],
    ['a time without milliseconds', { events: [{ ...event, created_at: '2026-11-26T09:30:00Z' }] }],
    ['no events', { events: [] }],
    ['data that is not an object', { events: [{ ...event, data: 'x' }] }],
  ])('when a body has %s, then it does not parse', (_name, body) => {
    expect(WebhookBodySchema.safeParse(body).success).toBe(false);
  });

  test('when the test receiver is sent a body that does not match, then closing it fails', async () => {
    const receiver = await startReceiver('a-secret-of-at-least-twenty-four-bytes');
    const res = await fetch(receiver.url, { method: 'POST', body: JSON.stringify({ events: [{ id: 'not-a-uuid' }] }) });
    expect(res.status).toBe(204);
    await expect(receiver.close()).rejects.toThrow(/did not match WebhookBodySchema/);
  });

  test('when the test receiver is sent a matching body, then closing it succeeds', async () => {
    const receiver = await startReceiver('a-secret-of-at-least-twenty-four-bytes');
    await fetch(receiver.url, { method: 'POST', body: JSON.stringify({ events: [event] }) });
    await expect(receiver.close()).resolves.toBeUndefined();
  });
});
