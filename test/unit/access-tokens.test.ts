import { randomUUID } from 'node:crypto';
import { AccessTokens } from '../../src/domain/identity/access-tokens';

/**
 * Access tokens are verified once and remembered until they expire: what is remembered must
 * never outlive the token, and only the exact bytes verified may hit it.
 */
const tokens = new AccessTokens('a-secret-of-at-least-thirty-two-bytes!!', 'issuer', 'audience');
const claims = () => ({ sub: randomUUID(), type: 'customer' as const, sid: randomUUID() });

test('a valid token verifies the same every time', async () => {
  const token = await tokens.sign({ ...claims(), ttlSeconds: 60 });
  const first = await tokens.verify(token);
  expect(first).toMatchObject({ type: 'customer' });
  expect(await tokens.verify(token)).toEqual(first);
});

test('a remembered token is refused once it expires', async () => {
  const token = await tokens.sign({ ...claims(), ttlSeconds: 60 });
  expect(await tokens.verify(token)).toBeDefined();
  // Only the clock moves: timers and promises run as they do.
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'setTimeout', 'setInterval'] });
  try {
    jest.setSystemTime(Date.now() + 50_000);
    expect(await tokens.verify(token)).toBeDefined();
    jest.setSystemTime(Date.now() + 12_000);
    expect(await tokens.verify(token)).toBeUndefined();
  } finally {
    jest.useRealTimers();
  }
});

test('a token that differs by one character from a remembered one is verified on its own, and refused', async () => {
  const token = await tokens.sign({ ...claims(), ttlSeconds: 60 });
  expect(await tokens.verify(token)).toBeDefined();
  // Not the last character: its low bits are padding, so A and B (or C and D) decode alike.
  const at = token.length - 5;
  const other = token[at] === 'A' ? 'Q' : 'A';
  expect(await tokens.verify(token.slice(0, at) + other + token.slice(at + 1))).toBeUndefined();
  expect(await new AccessTokens('another-secret-of-thirty-two-bytes!!!!', 'issuer', 'audience').verify(token)).toBeUndefined();
});
