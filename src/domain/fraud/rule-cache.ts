import type { RunBound } from '../../db/bound-transaction';
import { READ_RULES_AND_LISTS, readStampWith } from './fraud.queries';
import { compileRule, type FieldTest, type FraudListName } from './rules';

export interface CachedRule {
  id: string;
  version: number;
  event: string;
  match: string;
  conditions: Array<{ field: string; op: string; value: unknown }>;
  action: 'allow' | 'review' | 'block';
  /** The conditions compiled once, when the copy was read: whether the rule matches an evaluation's values. */
  matches: FieldTest;
}

/** The enabled rules of one event in evaluation order, and the fields they read (each once). */
export interface EventRules {
  rules: readonly CachedRule[];
  fields: readonly string[];
}

export interface FraudConfig {
  stamp: string;
  /** The enabled rules of each event, in evaluation order (position, then age). */
  rules: ReadonlyMap<string, EventRules>;
  lists: ReadonlyMap<FraudListName, readonly string[]>;
}

/**
 * What an evaluation reads besides the stamp, given the rules it will run: select-list columns
 * (`?` placeholders, aliases other than `stamp`) and how their row becomes what it needs.
 */
export interface ReadWithStamp<T> {
  columns: readonly string[];
  values: unknown[];
  finish(row: Readonly<Record<string, unknown>> | undefined): T;
}

/**
 * This process's copy of the enabled fraud rules and the lists. Every evaluation (each login,
 * withdrawal, transfer, deposit intent...) reads the one-row stamp in its own transaction and
 * uses the copy when the stamp is the one the copy was read at; every change of a rule or a
 * list writes a new stamp in its transaction. So a change takes effect at the next evaluation
 * in every process (API or worker) once it commits, and an evaluation pays one index read
 * instead of reading the rules and the lists each time. The copy holds the rules compiled
 * (conditions as tests, the fields of each event listed once), so an evaluation parses nothing.
 */
let copy: FraudConfig | null = null;
/** How many times this process read the rules and lists (not just the stamp): what tests and benchmarks watch. */
let loads = 0;

/**
 * The rules and lists as they stand, and what `read` asks for given them. The stamp is read in
 * the same statement as what `read` asks of the copy held, so an evaluation with nothing changed
 * makes one round trip for both; when the stamp differs (or nothing is held yet), that answer is
 * dropped, the rules and lists are read again, and then what `read` asks of them.
 */
export async function fraudConfigWith<T>(
  run: RunBound,
  read: (config: FraudConfig) => ReadWithStamp<T>,
): Promise<{ config: FraudConfig; read: T }> {
  const held = copy;
  const riding = held ? read(held) : null;
  const [now] = await run<Record<string, unknown>>({ sql: readStampWith(riding?.columns ?? []), values: riding?.values ?? [] });
  if (held && riding && now && now['stamp'] === held.stamp) return { config: held, read: riding.finish(now) };
  const config = await load(run);
  const again = read(config);
  const [row] =
    again.columns.length > 0
      ? await run<Record<string, unknown>>({ sql: `select ${again.columns.join(', ')}`, values: again.values })
      : [];
  return { config, read: again.finish(row) };
}

async function load(run: RunBound): Promise<FraudConfig> {
  const [row] = await run<{ stamp: string; rules: Array<Omit<CachedRule, 'matches'>>; lists: Record<string, string[]> }>(
    READ_RULES_AND_LISTS.bind({}),
  );
  loads += 1;
  const byEvent = new Map<string, CachedRule[]>();
  for (const r of row?.rules ?? []) {
    const of = byEvent.get(r.event) ?? [];
    of.push({ ...r, matches: compileRule(r) });
    byEvent.set(r.event, of);
  }
  const rules = new Map<string, EventRules>();
  for (const [event, of] of byEvent)
    rules.set(event, { rules: of, fields: [...new Set(of.flatMap((r) => r.conditions.map((c) => c.field)))] });
  const lists = new Map(Object.entries(row?.lists ?? {}) as Array<[FraudListName, string[]]>);
  const next: FraudConfig = { stamp: row?.stamp ?? '', rules, lists };
  copy = next;
  return next;
}

export function fraudConfigLoads(): number {
  return loads;
}
