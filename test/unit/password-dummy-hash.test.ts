import argon2 = require('@node-rs/argon2');
import { verifyPassword } from '../../src/domain/identity/passwords';

/**
 * An unknown email is verified against a dummy hash made once, so it answers like a wrong
 * password. A failed attempt at that hash must not stick: cached, it would refuse every
 * unknown email with an error (a 500 where a wrong password is a 401).
 */
describe('the dummy hash for unknown emails', () => {
  afterEach(() => jest.restoreAllMocks());

  test('when making the dummy hash fails once, then unknown emails still answer false and the next one makes it again', async () => {
    const hash = jest
      .spyOn(argon2, 'hash')
      .mockRejectedValueOnce(new Error('out of memory'))
      .mockResolvedValue('$argon2id$dummy');
    const verify = jest.spyOn(argon2, 'verify').mockResolvedValue(false);

    await expect(verifyPassword(undefined, 'guess')).resolves.toBe(false);
    await expect(verifyPassword(undefined, 'guess')).resolves.toBe(false);
    expect(hash).toHaveBeenCalledTimes(2);
    expect(verify).toHaveBeenLastCalledWith('$argon2id$dummy', 'guess');

    // Made once it is kept: a third unknown email hashes nothing more.
    await expect(verifyPassword(undefined, 'guess')).resolves.toBe(false);
    expect(hash).toHaveBeenCalledTimes(2);
    await expect(verifyPassword('$argon2id$stored', 'wrong')).resolves.toBe(false);
  });
});

describe('the dummy hash started by a known email', () => {
  test('when it fails while nobody waits for it, then no rejection goes unhandled (the process policy would exit)', async () => {
    // A module registry of its own, so no earlier test has made the dummy hash yet.
    let fresh!: { verifyPassword: typeof verifyPassword; argon2: typeof argon2 };
    jest.isolateModules(() => {
      fresh = {
        verifyPassword: (jest.requireActual('../../src/domain/identity/passwords') as { verifyPassword: typeof verifyPassword })
          .verifyPassword,
        argon2: jest.requireActual('@node-rs/argon2'),
      };
    });
    jest.spyOn(fresh.argon2, 'hash').mockRejectedValue(new Error('out of memory'));
    jest.spyOn(fresh.argon2, 'verify').mockResolvedValue(false);
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      await expect(fresh.verifyPassword('$argon2id$stored', 'wrong')).resolves.toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      process.off('unhandledRejection', record);
    }
    expect(unhandled).toEqual([]);
  });
});
