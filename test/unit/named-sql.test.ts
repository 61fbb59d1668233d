import { namedStatement, pgPlaceholders } from '../../src/platform/named-sql';
import { splitSql } from '../../src/platform/sql-scanner';

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

describe('named SQL parameters and the text around them', () => {
  const names = (text: string) => namedStatement<Record<string, unknown>>(text).names;
  const compiled = (text: string) => namedStatement<Record<string, unknown>>(text).bind({ id: 1 }).sql;

  test('when :name sits inside a string literal, then it stays text and is not a parameter', () => {
    expect(names(`select ':id', 'a '':b'' c' where x = :id`)).toEqual(['id']);
    expect(compiled(`select ':id', 'a '':b'' c' where x = :id`)).toBe(`select ':id', 'a '':b'' c' where x = ?`);
  });

  test('when an E-string escapes its quote with a backslash, then the literal still ends where Postgres ends it', () => {
    expect(compiled(`select E'it\\'s :id' , :id`)).toBe(`select E'it\\'s :id' , ?`);
    // A plain string ending in a backslash ends at its quote (standard_conforming_strings).
    expect(compiled(`select 'C:\\', :id`)).toBe(`select 'C:\\', ?`);
  });

  test('when :name sits inside a quoted identifier, then it stays part of the name', () => {
    expect(compiled(`select "odd "":id"" name" from t where id = :id`)).toBe(`select "odd "":id"" name" from t where id = ?`);
  });

  test('when :name sits inside a comment, then it is not a parameter', () => {
    expect(names(`select 1 -- bound to :missing\nwhere id = :id /* not :this /* nested :either */ :nor */`)).toEqual(['id']);
  });

  test('when :name sits inside a dollar-quoted body, then it is not a parameter', () => {
    expect(compiled(`do $$ begin perform :x; end $$; select :id`)).toBe(`do $$ begin perform :x; end $$; select ?`);
    expect(compiled(`select $fn$ :a $$ :b $fn$, :id`)).toBe(`select $fn$ :a $$ :b $fn$, ?`);
    expect(compiled(`select $1, :id`)).toBe(`select $1, ?`);
  });

  test('when a value is cast with ::, then the type is not a parameter, also right after a parameter', () => {
    expect(compiled(`select :id::int, '1'::numeric, array[:id]::text[]`)).toBe(`select ?::int, '1'::numeric, array[?]::text[]`);
  });

  test('when pg runs it, then a ? inside a literal or comment is not numbered', () => {
    expect(pgPlaceholders(`select '?', ? -- why?\n, "a?" , ?`)).toBe(`select '?', $1 -- why?\n, "a?" , $2`);
  });
});

describe('the SQL splitter', () => {
  test('when text is split, then joining the parts gives it back and only code parts are marked code', () => {
    const text = `select 'a', "b", $q$c$q$ -- d\n/* e */ f`;
    const parts = splitSql(text);
    expect(parts.map((p) => p.text).join('')).toBe(text);
    expect(parts.filter((p) => !p.code).map((p) => p.text)).toEqual([`'a'`, `"b"`, `$q$c$q$`, `-- d`, `/* e */`]);
  });

  test('when a literal or comment is unterminated, then it runs to the end of the text', () => {
    expect(splitSql(`select 'open :id`)).toEqual([
      { code: true, text: 'select ' },
      { code: false, text: `'open :id` },
    ]);
    expect(splitSql(`select /* open`).at(-1)).toEqual({ code: false, text: '/* open' });
  });
});
