import { cloneName, GROUP_NAME_MAX } from '../../src/domain/groups/group-names';

/** cloneName: `<name> (copy)`, `(copy 2)`, ..., within 64 characters, never half a character. */

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe('cloneName', () => {
  test('when n is 1, then the suffix is " (copy)"', () => {
    expect(cloneName('Standard', 1)).toBe('Standard (copy)');
  });

  test('when n is 2, 3 or 10, then the suffix carries the number', () => {
    expect(cloneName('Standard', 2)).toBe('Standard (copy 2)');
    expect(cloneName('Standard', 3)).toBe('Standard (copy 3)');
    expect(cloneName('Standard', 10)).toBe('Standard (copy 10)');
    expect(cloneName('Standard', 123456)).toBe('Standard (copy 123456)');
  });

  test('when n is 0 or negative, then it is treated as the first copy', () => {
    expect(cloneName('A', 0)).toBe('A (copy)');
    expect(cloneName('A', -3)).toBe('A (copy)');
  });

  test('when the whole fits in 64 characters, then the name is kept whole', () => {
    const name = 'x'.repeat(57);
    expect(cloneName(name, 1)).toBe(`${name} (copy)`);
    expect(cloneName(name, 1)).toHaveLength(64);
    expect(cloneName('y'.repeat(55), 2)).toBe(`${'y'.repeat(55)} (copy 2)`);
  });

  test('when the name is too long for the suffix, then the original part is shortened to make exactly 64', () => {
    const name = 'abcdefghij'.repeat(7).slice(0, 64);
    expect(cloneName(name, 1)).toBe(`${name.slice(0, 57)} (copy)`);
    expect(cloneName(name, 2)).toBe(`${name.slice(0, 55)} (copy 2)`);
    expect(cloneName(name, 10)).toBe(`${name.slice(0, 54)} (copy 10)`);
    expect(cloneName(name, 100)).toBe(`${name.slice(0, 53)} (copy 100)`);
    for (const n of [1, 2, 9, 10, 99, 100, 999_999]) expect(cloneName(name, n)).toHaveLength(GROUP_NAME_MAX);
  });

  test('when the name is 58 characters, then (copy) cuts one and (copy 2) cuts three', () => {
    const name = 'k'.repeat(58);
    expect(cloneName(name, 1)).toBe(`${'k'.repeat(57)} (copy)`);
    expect(cloneName(name, 2)).toBe(`${'k'.repeat(55)} (copy 2)`);
  });

  test('when names differ only after the cut, then their clone names are equal (the caller numbers past the clash)', () => {
    const stem = 's'.repeat(57);
    expect(cloneName(`${stem}AAAAAAA`, 1)).toBe(cloneName(`${stem}BBBBBBB`, 1));
  });

  test('when the cut would split a surrogate pair, then the whole emoji is dropped', () => {
    // 56 letters, then an emoji in UTF-16 units 56 and 57: a cut at 57 splits it.
    const name = `${'e'.repeat(56)}😀tail`;
    const clone = cloneName(name, 1);
    expect(clone).toBe(`${'e'.repeat(56)} (copy)`);
    expect(clone).not.toMatch(LONE_SURROGATE);
    expect(clone.length).toBeLessThanOrEqual(64);
  });

  test('when the cut falls just after a whole surrogate pair, then the emoji is kept', () => {
    const name = `${'e'.repeat(55)}😀tail`;
    expect(cloneName(name, 1)).toBe(`${'e'.repeat(55)}😀 (copy)`);
    expect(cloneName(name, 1)).toHaveLength(64);
  });

  test('when a name is all emoji, then every suffix length keeps whole characters within 64', () => {
    const name = '🚀'.repeat(32); // 64 UTF-16 units
    for (let n = 1; n <= 120; n++) {
      const clone = cloneName(name, n);
      expect(clone).not.toMatch(LONE_SURROGATE);
      expect(clone.length).toBeLessThanOrEqual(64);
      expect(clone.length).toBeGreaterThanOrEqual(63);
      expect(clone.endsWith(n === 1 ? ' (copy)' : ` (copy ${n})`)).toBe(true);
      expect(name.startsWith(clone.slice(0, clone.lastIndexOf(' (copy')))).toBe(true);
    }
  });

  test('when the name holds astral characters that fit, then they are kept as they are', () => {
    expect(cloneName('Gold 🥇', 1)).toBe('Gold 🥇 (copy)');
    expect(cloneName('Ωμέγα', 3)).toBe('Ωμέγα (copy 3)');
  });

  test('when the name is empty, then only the suffix remains', () => {
    expect(cloneName('', 1)).toBe(' (copy)');
  });

  test('for every n up to 1000, then clone names of one 64-character name are distinct', () => {
    const name = 'd'.repeat(64);
    const names = new Set(Array.from({ length: 1000 }, (_, i) => cloneName(name, i + 1)));
    expect(names.size).toBe(1000);
  });
});
