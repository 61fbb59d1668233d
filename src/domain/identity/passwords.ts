import { availableParallelism } from 'node:os';
import argon2 = require('@node-rs/argon2');

/** The package's Algorithm is a const enum, which isolatedModules builds cannot read at run time. */
const ARGON2ID: argon2.Algorithm.Argon2id = 2;
/** OWASP's argon2id baseline: 19 MiB, two passes, one lane. */
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19 * 1024, timeCost: 2, parallelism: 1 };

/**
 * How many hashes run at once: one per core, and always one thread of libuv's pool left over.
 * argon2 runs on that pool (4 threads unless UV_THREADPOOL_SIZE says otherwise), which also
 * serves dns.lookup (webhook hosts), file reads and WebCrypto (jose signs JWTs there), so a
 * hash on every thread would queue those behind whole hashes. More hashes than cores only
 * share the cores: the event loop loses its time slices to the hashing threads, so every request waits longer,
 * and the hashes get no faster (each costs more CPU, the threads evicting each other's 19 MiB
 * from the cache). The rest wait here in arrival order. A bigger machine raises
 * UV_THREADPOOL_SIZE with its cores.
 */
export const HASH_SLOTS = Math.max(1, Math.min(availableParallelism(), (Number(process.env.UV_THREADPOOL_SIZE) || 4) - 1));

let running = 0;
const waiting: Array<() => void> = [];

async function inSlot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= HASH_SLOTS) await new Promise<void>((resolve) => waiting.push(resolve));
  else running++;
  try {
    return await work();
  } finally {
    // The slot passes straight to the next in line, so `running` never dips and a newcomer cannot jump the queue.
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

export function hashPassword(password: string): Promise<string> {
  return inSlot(() => argon2.hash(password, OPTIONS));
}

let dummyHash: Promise<string> | undefined;

/**
 * The dummy hash, made once and kept. A failed attempt is forgotten, so the next unknown email
 * tries again: kept, its rejection would refuse every unknown email from then on. The handler
 * also keeps a failure nobody awaits (a known email started it) from going unhandled.
 */
function dummy(): Promise<string> {
  if (!dummyHash) {
    const made = hashPassword('dummy password that matches nothing');
    dummyHash = made;
    made.catch(() => {
      if (dummyHash === made) dummyHash = undefined;
    });
  }
  return dummyHash;
}

/**
 * Verifies a password. Without a stored hash (unknown email) it still verifies against a
 * dummy hash of the same parameters, so an unknown account costs what a wrong password costs
 * (and waits for a slot like any other). Any failure, the dummy hash's included, is a
 * mismatch: an unknown email never answers otherwise than a wrong password.
 */
export async function verifyPassword(storedHash: string | undefined, password: string): Promise<boolean> {
  // Started on the first verification of any kind, so the first unknown email is not the slow one.
  const pendingDummy = dummy();
  let ok: boolean;
  try {
    const hash = storedHash ?? (await pendingDummy);
    ok = await inSlot(() => argon2.verify(hash, password));
  } catch {
    ok = false;
  }
  return ok && storedHash !== undefined;
}
