import type { RunBound } from '../../db/bound-transaction';
import { READ_RULES_AND_LISTS, READ_RULES_STAMP } from './fraud.queries';
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

export async function fraudConfig(run: RunBound): Promise<FraudConfig> {
  const [now] = await run<{ stamp: string }>(READ_RULES_STAMP.bind({}));
  if (copy && now && copy.stamp === now.stamp) return copy;
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
