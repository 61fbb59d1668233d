import { isReplicaUnavailable, lsnValue } from '../../src/db/read-replica';

/** The pieces of src/db/read-replica.ts that need no server: WAL positions, and which errors send a read back to the primary. */

test('when WAL positions are compared, then the high word counts first and hex digits are read as hex', () => {
  expect(lsnValue('0/16B3748')).toBe(0x16b3748n);
  expect(lsnValue('1/0')).toBe(1n << 32n);
  expect(lsnValue('1/0') > lsnValue('0/FFFFFFFF')).toBe(true);
  expect(lsnValue('16/B374D848') > lsnValue('16/B374D847')).toBe(true);
});

test('when the replica itself fails, then the read is repeated on the primary; when the statement fails, then the error stands', () => {
  const unavailable = [
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5433'), { code: 'ECONNREFUSED' }),
    Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
    Object.assign(new Error('database "t_x" does not exist'), { code: '3D000' }),
    Object.assign(new Error('canceling statement due to conflict with recovery'), { code: '40001' }),
    Object.assign(new Error('connection failure'), { code: '08006' }),
    new Error('Connection terminated unexpectedly'),
    new Error('timeout exceeded when trying to connect'),
  ];
  for (const err of unavailable)
    expect({ err: err.message, unavailable: isReplicaUnavailable(err) }).toEqual({ err: err.message, unavailable: true });
  const statement = [
    Object.assign(new Error('invalid input syntax for type uuid'), { code: '22P02' }),
    Object.assign(new Error('relation "nope" does not exist'), { code: '42P01' }),
    new Error('no value for :id'),
    undefined,
  ];
  for (const err of statement) expect(isReplicaUnavailable(err)).toBe(false);
});
