import { readdirSync, readFileSync } from 'node:fs';

/**
 * Where CPU time went during a batch, read from Linux /proc (elsewhere every reading is
 * undefined). Times are seconds of one core; a process at full tilt on one core for 2 s used 2.
 */

/** USER_HZ: /proc counts CPU time in ticks of 1/100 s on every Linux architecture Node runs on. */
const TICKS_PER_SECOND = 100;

/** User plus system CPU seconds of one process, or undefined when it is gone (or this is not Linux). */
export function processCpuSeconds(pid: number): number | undefined {
  const stat = readStat(pid);
  return stat?.seconds;
}

/** The CPU seconds of processes by pid at one moment (cpuSecondsByName), to measure from. */
export type CpuMark = Map<number, { name: string; seconds: number }>;

/** CPU seconds of every process whose command name is one of `names` (e.g. postgres), by pid. */
export function cpuSecondsByName(names: string[]): CpuMark {
  const found: CpuMark = new Map();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat && names.includes(stat.name)) found.set(Number(entry), stat);
  }
  return found;
}

/**
 * CPU seconds process `pid` used between two readings: one started meanwhile counts from zero,
 * and so does a pid the system gave to another command since the mark.
 */
export function usedBetween(mark: CpuMark, now: CpuMark, pid: number): number {
  const reading = now.get(pid);
  if (!reading) return 0;
  const before = mark.get(pid);
  return reading.seconds - (before?.name === reading.name ? before.seconds : 0);
}

/**
 * CPU seconds the processes named `name` (every Postgres backend, say) used since `mark`,
 * process by process: one started meanwhile counts from zero, one that ended counts nothing.
 * Summing totals by name instead lost an ended backend's whole lifetime and read below zero.
 */
export function cpuSecondsSince(mark: CpuMark, name: string): number {
  const now = cpuSecondsByName([name]);
  let used = 0;
  for (const pid of now.keys()) used += usedBetween(mark, now, pid);
  return used;
}

export interface MachineCpu {
  /** Seconds some core spent running anything (user, nice, system, irq, softirq, steal). */
  busy: number;
  /** Seconds cores sat idle waiting for I/O (fsync, mostly). */
  iowait: number;
}

/** Totals since boot over all cores, from the first line of /proc/stat. */
export function machineCpu(): MachineCpu | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const [user, nice, system, , iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return { busy: (user + nice + system + irq + softirq + steal) / TICKS_PER_SECOND, iowait: iowait / TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
}

function readStat(pid: number): { name: string; seconds: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid ..." where comm may hold spaces and parentheses: split after the last ')'.
  const close = text.lastIndexOf(')');
  const name = text.slice(text.indexOf('(') + 1, close);
  const fields = text.slice(close + 2).split(' ');
  // Fields 14 and 15 of stat (utime, stime) are 11 and 12 counted from the state field.
  return { name, seconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND };
}
