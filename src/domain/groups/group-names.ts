export const GROUP_NAME_MAX = 64;

/**
 * The name of the n-th clone of a group: `<name> (copy)`, then
 * `<name> (copy 2)`, `<name> (copy 3)`, ... The original part is shortened so the whole
 * stays within 64 characters, never splitting a surrogate pair.
 */
export function cloneName(original: string, n: number): string {
  const suffix = n <= 1 ? ' (copy)' : ` (copy ${n})`;
  let base = original.slice(0, Math.max(0, GROUP_NAME_MAX - suffix.length));
  const last = base.charCodeAt(base.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) base = base.slice(0, -1);
  return base + suffix;
}
