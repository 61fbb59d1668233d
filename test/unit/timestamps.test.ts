import { isoInstant } from '../../src/api/http/timestamps';
import { zodIssuesToItems } from '../../src/api/validation/zod-issues';

function typeOf(value: string): string | undefined {
  const schema = isoInstant();
  const parsed = schema.safeParse(value);
  return parsed.success ? undefined : zodIssuesToItems('query', parsed.error.issues, schema, value)[0]?.type;
}

describe('ISO date-times at the edge', () => {
  test.each(['0001-01-01T00:00:00Z', '2026-11-24T10:00:00.123+05:30', '9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59+01:00'])(
    'when %s is in years 1 to 9999 UTC, then it is taken',
    (value) => {
      expect(typeOf(value)).toBeUndefined();
    },
  );

  test.each([
    ['year 0', '0000-06-01T00:00:00Z'],
    ['an offset that moves year 1 into year 0', '0001-01-01T00:00:00+05:30'],
    ['an offset that moves year 9999 into year 10000', '9999-12-31T23:59:59-05:00'],
  ])('when %s, then 422 datetime_parsing', (_what, value) => {
    expect(typeOf(value)).toBe('datetime_parsing');
  });

  test('when the text is not a date-time, then the format error is kept', () => {
    expect(typeOf('yesterday')).toBe('datetime_from_date_parsing');
  });
});
