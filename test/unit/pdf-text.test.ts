import { pieces, visualWords } from '../../src/domain/reports/formats/pdf-text';

describe('PDF text in any script', () => {
  test.each([
    ['Anna Keller', ['Anna', ' ', 'Keller']],
    ['محمد العلي', ['العلي', ' ', 'محمد']],
    ['Account holder: محمد العلي', ['Account', ' ', 'holder:', ' ', 'العلي', ' ', 'محمد']],
    ['محمد العلي (Omar)', ['(Omar)', ' ', 'العلي', ' ', 'محمد']],
    ['Иван Петров', ['Иван', ' ', 'Петров']],
  ])('when %p is laid out, then its words go left to right as %p', (text, words) => {
    expect(visualWords(text)).toEqual(words);
  });

  test('when a line mixes scripts, then each character is drawn by a font that has it, CJK by the fallback', () => {
    const drawn = pieces('Ελένη 王伟', 'regular');
    expect(drawn.map((p) => p.text).join('')).toBe('Ελένη 王伟');
    const latinFont = pieces('A', 'regular')[0]!.font;
    expect(drawn.find((p) => p.text.includes('Ελένη'))!.font).toBe(latinFont);
    expect(drawn.find((p) => p.text.includes('王伟'))!.font).not.toBe(latinFont);
  });
});
