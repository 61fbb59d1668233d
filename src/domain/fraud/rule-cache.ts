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
 * (`?` placeholders, aliases other than `stamp`) and how their row becomes what it needs, and
 * what it writes in the same statement given those rules (`ctes`). A write that holds only for
 * these rules checks the stamp itself (the statement runs whatever the stamp says) and says
 * in a column whether it wrote.
 */
export interface ReadWithStamp<T> {
  /** Data-modifying CTEs (`name as (...)`), named with a `fraud_` prefix. */
  ctes?: readonly string[];
  columns: readonly string[];
  /** The placeholders' values in the statement's order: the CTEs', then the columns'. */
  values: unknown[];
  finish(row: Readonly<Record<string, unknown>> | undefined): T;
}

/** Writes that ride on the statement that reads the stamp whatever it says (CTEs as in ReadWithStamp). */
export interface StampRiders {
  ctes: readonly string[];
  values: unknown[];
}

const NO_RIDERS: StampRiders = { ctes: [], values: [] };

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
 * dropped, the rules and lists are read again, and then what `read` asks of them. `riders`
 * (what the evaluation writes whatever the rules say) go with the first statement.
 */
export async function fraudConfigWith<T>(
  run: RunBound,
  read: (config: FraudConfig) => ReadWithStamp<T>,
  riders: StampRiders = NO_RIDERS,
): Promise<{ config: FraudConfig; read: T }> {
  const held = copy;
  const riding = held ? read(held) : null;
  const [now] = await run<Record<string, unknown>>({
    sql: readStampWith(riding?.columns ?? [], [...riders.ctes, ...(riding?.ctes ?? [])]),
    values: [...riders.values, ...(riding?.values ?? [])],
  });
  if (held && riding && now && now['stamp'] === held.stamp) return { config: held, read: riding.finish(now) };
  const config = await load(run);
  const again = read(config);
  const [row] =
    again.columns.length > 0 || (again.ctes?.length ?? 0) > 0
      ? await run<Record<string, unknown>>({ sql: readStampWith(again.columns, again.ctes ?? []), values: again.values })
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

/**
 * The copy as held, without reading the stamp: for an evaluation decided before the statement
 * that stores it, which checks the stamp itself (EVALUATION_AT_STAMP). Null before the first read.
 */
export function heldFraudConfig(): FraudConfig | null {
  return copy;
}

export function fraudConfigLoads(): number {
  return loads;
}
