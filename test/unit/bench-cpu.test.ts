import { usedBetween, type CpuMark } from '../../bench/lib/cpu';

const mark = (entries: Array<[number, string, number]>): CpuMark =>
  new Map(entries.map(([pid, name, seconds]) => [pid, { name, seconds }]));

test('when a process ran through both readings, then it counts what it used between them', () => {
  expect(usedBetween(mark([[10, 'postgres', 2]]), mark([[10, 'postgres', 2.5]]), 10)).toBeCloseTo(0.5);
});

test('when a process started after the mark, then it counts from zero', () => {
  expect(usedBetween(mark([]), mark([[11, 'postgres', 0.3]]), 11)).toBeCloseTo(0.3);
});

test('when a process ended before the second reading, then it counts nothing, never below zero', () => {
  expect(usedBetween(mark([[12, 'postgres', 40]]), mark([]), 12)).toBe(0);
});

test('when the pid went to another command since the mark, then the new process counts from zero', () => {
  expect(usedBetween(mark([[13, 'postgres', 40]]), mark([[13, 'redis-server', 0.2]]), 13)).toBeCloseTo(0.2);
});
