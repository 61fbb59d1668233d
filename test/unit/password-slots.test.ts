import argon2 = require('@node-rs/argon2');
import { HASH_SLOTS, hashPassword, verifyPassword } from '../../src/domain/identity/passwords';

/**
 * argon2 shares libuv's pool with WebCrypto (every JWT check): at most HASH_SLOTS hashes may
 * run at once, so a thread is always left over, and every hash asked for still runs.
 */
describe('password hash slots', () => {
  afterEach(() => jest.restoreAllMocks());

  test('when more hashes are asked for than there are slots, then at most HASH_SLOTS run at once and all finish', async () => {
    let running = 0;
    let most = 0;
    const slow = async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running--;
    };
    jest.spyOn(argon2, 'hash').mockImplementation(async () => {
      await slow();
      return 'hash';
    });
    jest.spyOn(argon2, 'verify').mockImplementation(async () => {
      await slow();
      return false;
    });
    const asked = HASH_SLOTS * 3 + 2;
    const results = await Promise.all([
      ...Array.from({ length: asked }, () => hashPassword('p')),
      ...Array.from({ length: asked }, () => verifyPassword('stored', 'p')),
    ]);
    expect(results).toHaveLength(asked * 2);
    expect(most).toBe(HASH_SLOTS);
    expect(running).toBe(0);
  });

  test('when a hash fails, then its slot is given back', async () => {
    jest.spyOn(argon2, 'hash').mockRejectedValue(new Error('boom'));
    for (let i = 0; i < HASH_SLOTS + 2; i++) await expect(hashPassword('p')).rejects.toThrow('boom');
    jest.spyOn(argon2, 'hash').mockResolvedValue('hash');
    await expect(hashPassword('p')).resolves.toBe('hash');
  });

  test('when the pool has more than one thread, then the hashes leave one for WebCrypto', () => {
    const pool = Number(process.env.UV_THREADPOOL_SIZE) || 4;
    expect(HASH_SLOTS).toBeGreaterThanOrEqual(1);
    if (pool > 1) expect(HASH_SLOTS).toBeLessThan(pool);
  });
});
