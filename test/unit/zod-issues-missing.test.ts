import { z } from 'zod';
import { LoginText, MoneyAmount } from '../../src/api/http/amounts';
import { zodIssuesToItems } from '../../src/api/validation/zod-issues';

function itemsOf(schema: z.ZodType, input: unknown, where: 'body' | 'query' = 'body') {
  const parsed = schema.safeParse(input, { reportInput: true });
  if (parsed.success) throw new Error('expected a validation failure');
  return zodIssuesToItems(where, parsed.error.issues, schema, input);
}

describe('422 types for absent fields', () => {
  const body = z.object({ kind: z.enum(['live', 'demo']), cmd: z.literal([0, 1]), amount: MoneyAmount });

  test('when an enum, a literal and a number are all absent, then each is missing', () => {
    expect(itemsOf(body, {})).toEqual([
      { loc: ['body', 'kind'], msg: 'Field required', type: 'missing' },
      { loc: ['body', 'cmd'], msg: 'Field required', type: 'missing' },
      { loc: ['body', 'amount'], msg: 'Field required', type: 'missing' },
    ]);
  });

  test('when they are present with wrong values, then they keep literal_error and float_type', () => {
    const types = itemsOf(body, { kind: 'wallet', cmd: 2, amount: 'x' }).map((i) => [i.loc, i.type]);
    expect(types).toEqual([
      [['body', 'kind'], 'literal_error'],
      [['body', 'cmd'], 'literal_error'],
      [['body', 'amount'], 'float_type'],
    ]);
  });

  test('when an enum is sent as null, then it is literal_error, not missing', () => {
    expect(itemsOf(body, { kind: null, cmd: 0, amount: 1 })[0]).toMatchObject({ loc: ['body', 'kind'], type: 'literal_error' });
  });

  test('when an integer query parameter is absent, then it is missing; when it is not digits, then int_parsing', () => {
    const query = z.object({ login: LoginText });
    expect(itemsOf(query, {}, 'query')).toEqual([{ loc: ['query', 'login'], msg: 'Field required', type: 'missing' }]);
    for (const login of ['abc', '0x10', '1e3', ' 7', '-1', ''])
      expect(itemsOf(query, { login }, 'query')[0]).toMatchObject({ loc: ['query', 'login'], type: 'int_parsing' });
    expect(itemsOf(query, { login: '0' }, 'query')[0]).toMatchObject({ loc: ['query', 'login'], type: 'greater_than_equal' });
  });

  test('when a nested field is absent, then the missing item points at its full path', () => {
    const nested = z.object({ items: z.array(z.object({ side: z.enum(['buy', 'sell']) })) });
    expect(itemsOf(nested, { items: [{ side: 'buy' }, {}] })).toEqual([
      { loc: ['body', 'items', 1, 'side'], msg: 'Field required', type: 'missing' },
    ]);
  });

  test('when a key only exists on the prototype, then it still counts as absent', () => {
    const schema = z.object({ constructor: z.enum(['a']) });
    expect(itemsOf(schema, {})[0]).toMatchObject({ type: 'missing' });
  });
});
