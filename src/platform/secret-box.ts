import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** How much of a file one turn of the event loop enciphers: about a millisecond of work. */
const CIPHER_PIECE_BYTES = 1024 * 1024;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Bytes `from` to `to` of the pieces taken as one buffer (the IV or the tag, a few bytes). */
function rangeOf(pieces: Buffer[], from: number, to: number): Buffer {
  const out: Buffer[] = [];
  let offset = 0;
  for (const piece of pieces) {
    const start = Math.max(from - offset, 0);
    const end = Math.min(to - offset, piece.length);
    if (start < end) out.push(piece.subarray(start, end));
    offset += piece.length;
  }
  return Buffer.concat(out);
}

/** One data encryption key: 32 bytes under an id that every value sealed with it records. */
export interface DataKey {
  id: string;
  key: Buffer;
}

/** Key ids are written into every sealed value: short, and never ':' or ','. */
export const DATA_KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/** Why a value could not be unsealed; a label of `secrets_unseal_failures_total`. */
export type UnsealReason = 'unknown_key' | 'tampered' | 'malformed' | 'legacy_key_missing';

/**
 * A sealed value that cannot be opened: a configuration or data fault that no retry mends.
 * The message names what and why, never the value.
 */
export class UnsealError extends Error {
  constructor(
    readonly purpose: string,
    readonly subject: string,
    readonly reason: UnsealReason,
    readonly keyId: string | null,
  ) {
    super(`${subject} cannot be unsealed: ${REASONS[reason](keyId)}`);
    this.name = 'UnsealError';
  }
}

const REASONS: Record<UnsealReason, (keyId: string | null) => string> = {
  unknown_key: (id) => `it was sealed under key id "${id}", which is not in DATA_ENCRYPTION_KEYS`,
  tampered: (id) => `it does not authenticate under key id "${id}" (altered, or that id names another key)`,
  malformed: () => 'it is not a sealed value',
  legacy_key_missing: () => 'it was sealed under the JWT_SECRET of an earlier release and JWT_SECRET is not set (or has changed)',
};

/** Current values: `v2:<key id>:<iv>:<ciphertext and GCM tag>`, base64url. */
const CURRENT = 'v2';
/** Values sealed before DATA_ENCRYPTION_KEYS: `v1.<iv>.<ciphertext>.<tag>` under a key derived from JWT_SECRET. */
const LEGACY = 'v1';

/**
 * The data encryption keys of this process (DATA_ENCRYPTION_KEYS, or outside production the
 * development key in the database): the first seals, all of them open. `legacySecret` is
 * the JWT_SECRET that sealed values before this format existed; they stay readable until the
 * re-seal job has moved them. Every value that cannot be opened is reported once, here, so
 * no caller can swallow it quietly.
 */
export class DataKeyRing {
  readonly currentId: string;
  private readonly keys: Map<string, Buffer>;

  constructor(
    keys: readonly DataKey[],
    private readonly legacySecret: string | undefined,
    private readonly onUnsealFailure: (failure: UnsealError) => void,
  ) {
    if (keys.length === 0) throw new Error('a key ring needs at least one key');
    this.currentId = keys[0]!.id;
    this.keys = new Map(keys.map((k) => [k.id, k.key]));
  }

  get keyIds(): string[] {
    return [...this.keys.keys()];
  }

  /** A box for one purpose: each purpose seals under its own subkey, so a value never opens as another kind. */
  box(purpose: string): SecretBox {
    return new SecretBox(this, purpose);
  }

  /** @internal */
  subkey(id: string, purpose: string): Buffer | undefined {
    const key = this.keys.get(id);
    return key && Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `trading-api:data-key:${purpose}`, 32));
  }

  /** @internal The key values sealed by earlier releases were under (same HKDF labels as then). */
  legacyKey(purpose: string): Buffer | undefined {
    return this.legacySecret === undefined
      ? undefined
      : Buffer.from(hkdfSync('sha256', this.legacySecret, Buffer.alloc(0), `trading-api:${purpose}`, 32));
  }

  /** @internal */
  fail(failure: UnsealError): never {
    this.onUnsealFailure(failure);
    throw failure;
  }
}

/** AES-256-GCM for the secrets that must be readable again (TOTP seeds, webhook secrets, a mail's secret values, documents). */
export class SecretBox {
  constructor(
    private readonly ring: DataKeyRing,
    readonly purpose: string,
  ) {}

  seal(plain: string): string {
    const id = this.ring.currentId;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.ring.subkey(id, this.purpose)!, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return [CURRENT, id, iv.toString('base64url'), body.toString('base64url')].join(':');
  }

  get currentKeyId(): string {
    return this.ring.currentId;
  }

  get keyIds(): string[] {
    return this.ring.keyIds;
  }

  /** How every value sealed under the current key begins: what the re-seal job leaves alone. */
  get currentPrefix(): string {
    return `${CURRENT}:${this.ring.currentId}:`;
  }

  /**
   * Seals bytes (a document's file) under the current key: the 12-byte IV, the ciphertext and
   * the 16-byte tag as one buffer, the key id returned to be stored beside it (a column the
   * re-seal job selects on). `context` is GCM's additional data: the row the value belongs to,
   * so sealed bytes copied onto another row do not open there. Files run to 10 MiB, whose
   * cipher pass alone takes tens of milliseconds: the bytes go through a piece at a time with a
   * turn of the event loop between pieces, so other requests are answered meanwhile.
   */
  async sealBytes(plain: Buffer, context: string): Promise<{ keyId: string; sealed: Buffer }> {
    const id = this.ring.currentId;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.ring.subkey(id, this.purpose)!, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const parts = [iv];
    for (let at = 0; at < plain.length; at += CIPHER_PIECE_BYTES) {
      parts.push(cipher.update(plain.subarray(at, at + CIPHER_PIECE_BYTES)));
      await nextTurn();
    }
    parts.push(cipher.final(), cipher.getAuthTag());
    return { keyId: id, sealed: Buffer.concat(parts) };
  }

  /** Opens what sealBytes sealed, a piece at a time like it; fails loudly (UnsealError, reported) like open. */
  async openBytes(sealed: Buffer, keyId: string, context: string, subject: string): Promise<Buffer> {
    return Buffer.concat(await this.openPieces([sealed], keyId, context, subject));
  }

  /**
   * Opens sealed bytes held in pieces (as read from the database a piece at a time) into pieces
   * of plain bytes, a turn of the event loop for each: a 10 MiB file is never copied whole. The
   * tag is checked before anything is returned, so no byte of a tampered file leaves here.
   */
  async openPieces(sealed: Buffer[], keyId: string, context: string, subject: string): Promise<Buffer[]> {
    const key = this.ring.subkey(keyId, this.purpose);
    if (!key) return this.fail(subject, 'unknown_key', keyId);
    const total = sealed.reduce((n, p) => n + p.length, 0);
    if (total < 12 + 16) return this.fail(subject, 'malformed', keyId);
    const parts: Buffer[] = [];
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, rangeOf(sealed, 0, 12));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(rangeOf(sealed, total - 16, total));
      let offset = 0;
      for (const piece of sealed) {
        // This piece's share of the ciphertext: the bytes between the IV and the tag.
        const from = Math.max(0, 12 - offset);
        const to = Math.min(piece.length, total - 16 - offset);
        offset += piece.length;
        for (let at = from; at < to; at += CIPHER_PIECE_BYTES) {
          parts.push(decipher.update(piece.subarray(at, Math.min(to, at + CIPHER_PIECE_BYTES))));
          await nextTurn();
        }
      }
      parts.push(decipher.final());
    } catch {
      return this.fail(subject, 'tampered', keyId);
    }
    return parts;
  }

  /** Opens a value; `subject` names it for the log and the error ("webhook <id>"), never the value. */
  open(sealed: string, subject: string): string {
    if (sealed.startsWith(`${LEGACY}.`)) return this.openLegacy(sealed, subject);
    const [version, id, iv, body, extra] = sealed.split(':');
    if (version !== CURRENT || !id || !iv || !body || extra !== undefined) return this.fail(subject, 'malformed', null);
    const key = this.ring.subkey(id, this.purpose);
    if (!key) return this.fail(subject, 'unknown_key', id);
    const raw = Buffer.from(body, 'base64url');
    if (raw.length < 16) return this.fail(subject, 'malformed', id);
    return (
      this.decrypt(key, iv, raw.subarray(0, raw.length - 16), raw.subarray(raw.length - 16)) ?? this.fail(subject, 'tampered', id)
    );
  }

  private openLegacy(sealed: string, subject: string): string {
    const [, iv, body, tag, extra] = sealed.split('.');
    if (!iv || !body || !tag || extra !== undefined) return this.fail(subject, 'malformed', null);
    const key = this.ring.legacyKey(this.purpose);
    if (!key) return this.fail(subject, 'legacy_key_missing', null);
    return (
      this.decrypt(key, iv, Buffer.from(body, 'base64url'), Buffer.from(tag, 'base64url')) ??
      this.fail(subject, 'legacy_key_missing', null)
    );
  }

  private decrypt(key: Buffer, iv: string, body: Buffer, tag: Buffer): string | undefined {
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }

  private fail(subject: string, reason: UnsealReason, keyId: string | null): never {
    return this.ring.fail(new UnsealError(this.purpose, subject, reason, keyId));
  }
}
