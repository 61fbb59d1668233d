/**
 * Values loaded at most once per key within `ttlMs`; callers asking while a load is in
 * flight share it, and a failed load is forgotten at once so the next caller tries again.
 * Expired entries are dropped whenever a load starts, so the map holds only live keys.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { at: number; value: Promise<V> }>();

  constructor(private readonly ttlMs: number) {}

  get(key: string, load: () => Promise<V>): Promise<V> {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    for (const [k, e] of this.entries) if (now - e.at >= this.ttlMs) this.entries.delete(k);
    const value = load();
    this.entries.set(key, { at: now, value });
    value.catch(() => {
      if (this.entries.get(key)?.value === value) this.entries.delete(key);
    });
    return value;
  }

  /** Drops every entry: the next get loads afresh. */
  clear(): void {
    this.entries.clear();
  }
}
