import { namedStatement, pgPlaceholders } from '../../src/platform/named-sql';

describe('named SQL parameters', () => {
  const statement = namedStatement<{ id: string; amount: string; data: string }>(
    `update t set a = a + :amount, b = :amount, data = :data::jsonb where id = :id and x::text = 'y'`,
  );

  test('when a statement is compiled, then each :name becomes ? in order and ::casts are left alone', () => {
    expect(statement.names).toEqual(['amount', 'amount', 'data', 'id']);
    expect(statement.bind({ id: 'i', amount: '1.00', data: '{}' })).toEqual({
      sql: `update t set a = a + ?, b = ?, data = ?::jsonb where id = ? and x::text = 'y'`,
      values: ['1.00', '1.00', '{}', 'i'],
    });
  });

  test('when a value is missing, then binding throws rather than writing NULL; null itself is a value', () => {
    expect(() => statement.bind({ id: 'i', amount: '1.00' } as never)).toThrow('no value for :data');
    expect(statement.bind({ id: 'i', amount: '1.00', data: null as never }).values).toEqual(['1.00', '1.00', null, 'i']);
  });

  test('when pg runs it, then the placeholders are numbered', () => {
    expect(pgPlaceholders('select ?, ?::int, ?')).toBe('select $1, $2::int, $3');
  });
});
