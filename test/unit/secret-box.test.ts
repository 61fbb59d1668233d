import { randomBytes } from 'node:crypto';
import { DataKeyRing, UnsealError, type DataKey } from '../../src/platform/secret-box';
import { legacySeal } from '../integration/secrets/secrets-kit';

const K1: DataKey = { id: 'k1', key: randomBytes(32) };
const K2: DataKey = { id: 'k2', key: randomBytes(32) };
const PLAIN = 'whsec_the-integrators-secret';

function ring(keys: DataKey[], legacySecret?: string) {
  const failures: UnsealError[] = [];
  return { ring: new DataKeyRing(keys, legacySecret, (f) => failures.push(f)), failures };
}

function unsealFailure(fn: () => unknown): UnsealError {
  try {
    fn();
  } catch (err) {
    if (err instanceof UnsealError) return err;
    throw err;
  }
  throw new Error('expected an UnsealError');
}

describe('sealing secrets at rest', () => {
  test('when a value is sealed, then it records the first key id and opens again, never showing the plain text', () => {
    const { ring: r } = ring([K1, K2]);
    const sealed = r.box('webhook-secret').seal(PLAIN);
    expect(sealed).toMatch(/^v2:k1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain(PLAIN);
    expect(r.box('webhook-secret').seal(PLAIN)).not.toBe(sealed);
    expect(r.box('webhook-secret').open(sealed, 'webhook w1')).toBe(PLAIN);
  });

  test('when the sealing key is no longer first but still listed, then its values still open', () => {
    const sealed = ring([K1]).ring.box('totp-secret').seal(PLAIN);
    const { ring: rotated, failures } = ring([K2, K1]);
    expect(rotated.box('totp-secret').open(sealed, 'seed')).toBe(PLAIN);
    expect(rotated.box('totp-secret').seal(PLAIN)).toMatch(/^v2:k2:/);
    expect(failures).toEqual([]);
  });

  test('when a value names a key id that is not configured, then it is a named failure, reported once', () => {
    const sealed = ring([K1]).ring.box('webhook-secret').seal(PLAIN);
    const { ring: r, failures } = ring([K2]);
    const err = unsealFailure(() => r.box('webhook-secret').open(sealed, 'the signing secret of webhook w1'));
    expect(err).toMatchObject({ name: 'UnsealError', reason: 'unknown_key', keyId: 'k1', purpose: 'webhook-secret' });
    expect(err.message).toBe(
      'the signing secret of webhook w1 cannot be unsealed: it was sealed under key id "k1", which is not in DATA_ENCRYPTION_KEYS',
    );
    expect(failures).toEqual([err]);
  });

  test('when a sealed value was altered, or its id names another key, then it does not open', () => {
    const { ring: r, failures } = ring([K1]);
    const sealed = r.box('webhook-secret').seal(PLAIN);
    const parts = sealed.split(':');
    const body = Buffer.from(parts[3]!, 'base64url');
    body[0] ^= 1;
    const altered = [...parts.slice(0, 3), body.toString('base64url')].join(':');
    expect(unsealFailure(() => r.box('webhook-secret').open(altered, 'w1')).reason).toBe('tampered');
    const otherK1 = ring([{ id: 'k1', key: randomBytes(32) }]).ring;
    expect(unsealFailure(() => otherK1.box('webhook-secret').open(sealed, 'w1')).reason).toBe('tampered');
    expect(unsealFailure(() => r.box('webhook-secret').open('not sealed at all', 'w1')).reason).toBe('malformed');
    expect(failures.every((f) => !f.message.includes(PLAIN))).toBe(true);
  });

  test('when a value of one purpose is opened as another, then it does not open (each purpose has its own subkey)', () => {
    const { ring: r } = ring([K1]);
    const seed = r.box('totp-secret').seal(PLAIN);
    expect(unsealFailure(() => r.box('webhook-secret').open(seed, 'w1')).reason).toBe('tampered');
  });

  test('when a value of an earlier release is read, then it opens while JWT_SECRET is the one that sealed it', () => {
    const jwt = randomBytes(32).toString('base64url');
    const old = legacySeal(jwt, 'webhook-secret', PLAIN);
    expect(ring([K1], jwt).ring.box('webhook-secret').open(old, 'w1')).toBe(PLAIN);
    expect(unsealFailure(() => ring([K1]).ring.box('webhook-secret').open(old, 'w1')).reason).toBe('legacy_key_missing');
    const other = randomBytes(32).toString('base64url');
    expect(unsealFailure(() => ring([K1], other).ring.box('webhook-secret').open(old, 'w1')).reason).toBe('legacy_key_missing');
  });

  test('when the re-seal asks what is current, then only values under the first key count', () => {
    const { ring: r } = ring([K2, K1]);
    const box = r.box('mail-secret-data');
    expect(box.currentPrefix).toBe('v2:k2:');
    expect(box.seal(PLAIN).startsWith(box.currentPrefix)).toBe(true);
    expect(ring([K1]).ring.box('mail-secret-data').seal(PLAIN).startsWith(box.currentPrefix)).toBe(false);
  });
});

describe('sealing files in pieces', () => {
  /** `bytes` cut into pieces of `size` (the last one shorter), as the database hands them back. */
  const cut = (bytes: Buffer, size: number) =>
    Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

  test('when sealed bytes come back in pieces of any size, even splitting the IV or the tag, then they open to the same bytes', async () => {
    const box = ring([K1]).ring.box('document');
    // Tiny pieces on a small file (every boundary falls somewhere in the IV, the body and the
    // tag), large ones on a file of several mebibytes: the cost stays in the pieces' count.
    for (const [bytes, sizes] of [
      [64 * 1024 + 5, [7, 13, 1000]],
      [3 * 1024 * 1024 + 5, [1000, 1024 * 1024]],
    ] as const) {
      const file = randomBytes(bytes);
      const { keyId, sealed } = await box.sealBytes(file, 'doc-1');
      for (const size of [...sizes, sealed.length - 3, sealed.length]) {
        const opened = await box.openPieces(cut(sealed, size), keyId, 'doc-1', 'document doc-1');
        expect({ bytes, size, same: Buffer.concat(opened).equals(file) }).toEqual({ bytes, size, same: true });
      }
    }
  });

  test('when one byte of a file in pieces is altered, or it is opened as another row, then nothing of it is returned', async () => {
    const box = ring([K1]).ring.box('document');
    const { keyId, sealed } = await box.sealBytes(randomBytes(100_000), 'doc-1');
    const altered = Buffer.from(sealed);
    altered[50_000] ^= 1;
    await expect(box.openPieces(cut(altered, 4096), keyId, 'doc-1', 'document doc-1')).rejects.toBeInstanceOf(UnsealError);
    await expect(box.openPieces(cut(sealed, 4096), keyId, 'doc-2', 'document doc-2')).rejects.toBeInstanceOf(UnsealError);
  });
});
