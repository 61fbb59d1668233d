import argon2 from 'argon2';

/** OWASP's argon2id baseline: 19 MiB, two passes, one lane. */
const OPTIONS = { type: argon2.argon2id, memoryCost: 19 * 1024, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, OPTIONS);
}

let dummyHash: Promise<string> | undefined;

/**
 * Verifies a password. Without a stored hash (unknown email) it still verifies against a
 * dummy hash of the same parameters, so an unknown account costs what a wrong password costs.
 */
export async function verifyPassword(storedHash: string | undefined, password: string): Promise<boolean> {
  dummyHash ??= hashPassword('dummy password that matches nothing');
  const hash = storedHash ?? (await dummyHash);
  let ok = false;
  try {
    ok = await argon2.verify(hash, password);
  } catch {
    ok = false;
  }
  return ok && storedHash !== undefined;
}
