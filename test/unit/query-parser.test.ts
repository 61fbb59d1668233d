import { parseQuery } from '../../src/api/http/query';
import { unsafeInput } from '../../src/api/validation/safe-input';

describe('query strings', () => {
  test('when the text is UTF-8, then it decodes as node:querystring does (plus is a space, repeats make a list)', () => {
    expect({ ...parseQuery('a=caf%C3%A9+x&b=1&b=2&c=%ZZ&d=%') }).toEqual({ a: 'café x', b: ['1', '2'], c: '%ZZ', d: '%' });
  });

  test.each([
    ['the bytes of a lone surrogate', 'action=%ED%A0%80', '\udced\udca0\udc80'],
    ['a byte that is never UTF-8', 'action=x%FFy', 'x\udcffy'],
    ['a sequence cut short', 'action=%E2%82', '\udce2\udc82'],
  ])(
    'when a value holds %s, then each byte above 0x7F becomes a lone surrogate, refused at its parameter',
    (_what, text, decoded) => {
      const query = parseQuery(text);
      expect(query.action).toBe(decoded);
      expect(unsafeInput('query', query)).toEqual([
        { loc: ['query', 'action'], msg: expect.any(String), type: 'string_unicode' },
      ]);
    },
  );

  test('when a key is not UTF-8, then the key is refused', () => {
    expect(unsafeInput('query', parseQuery('%FF=1'))).toEqual([
      { loc: ['query', '\udcff'], msg: expect.any(String), type: 'string_unicode' },
    ]);
  });
});
