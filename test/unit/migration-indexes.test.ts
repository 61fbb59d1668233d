import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ormConfig } from '../../src/db/orm-config';

/**
 * Tables large enough (a million rows and more at a broker) that a plain CREATE INDEX, which
 * blocks every write to the table while it builds, is an outage: such an index is built with
 * CREATE INDEX CONCURRENTLY, in a migration that runs outside a transaction
 * (`isTransactional()` false). docs/operations.md says how an operator runs one on a live
 * database.
 */
const LARGE_TABLES = ['orders', 'ledger_entries', 'domain_events', 'event_inbox', 'webhook_messages', 'account_daily_snapshots'];

/**
 * Migrations written before the rule, each run when its tables were new or small. Never add a
 * name here: write the index concurrently instead.
 */
const HISTORIC = new Set([
  'Migration20261122193400_Trading',
  'Migration20261123143034_Hardening',
  'Migration20261123145431_OutboxRelay',
  'Migration20261123170412_Webhooks',
  'Migration20261123170854_RiskRuns',
  'Migration20261123171540_Engine',
]);

const dir = join(__dirname, '..', '..', 'src', 'db', 'migrations');
const migrations = readdirSync(dir)
  .filter((f) => /^Migration\d{14}_\w+\.ts$/.test(f))
  .map((f) => ({ name: f.replace(/\.ts$/, ''), text: readFileSync(join(dir, f), 'utf8') }));

/**
 * Every CREATE INDEX statement on a large table: [table, concurrently?]. One in a `down` that
 * first creates that very table again (putting back a table its `up` dropped) is left out: it
 * is built on the new, empty table, before the `down` fills it.
 */
function largeIndexes(text: string): Array<{ table: string; concurrently: boolean }> {
  const downAt = text.search(/async\s+down\s*\(/);
  const down = downAt < 0 ? '' : text.slice(downAt);
  const found: Array<{ table: string; concurrently: boolean }> = [];
  const pattern =
    /create\s+(?:unique\s+)?index\s+(concurrently\s+)?(?:if\s+not\s+exists\s+)?"?\w+"?\s+on\s+(?:only\s+)?(?:"?public"?\.)?"?(\w+)"?/gi;
  for (const m of text.matchAll(pattern)) {
    const table = m[2]!.toLowerCase();
    const remade = downAt >= 0 && m.index >= downAt && new RegExp(`create\\s+table\\s+"?${table}"?\\s*\\(`, 'i').test(down);
    if (LARGE_TABLES.includes(table) && !remade) found.push({ table, concurrently: Boolean(m[1]) });
  }
  return found;
}

test('when the migrations are read, then the scan finds the historic indexes of large tables (the pattern works)', () => {
  expect(migrations.length).toBeGreaterThan(20);
  for (const name of HISTORIC) {
    const m = migrations.find((x) => x.name === name);
    expect(m && largeIndexes(m.text).length).toBeGreaterThan(0);
  }
  expect(largeIndexes('create index concurrently "x" on "orders" ("a")')).toEqual([{ table: 'orders', concurrently: true }]);
  expect(largeIndexes('CREATE UNIQUE INDEX IF NOT EXISTS x ON public.ledger_entries (a)')).toEqual([
    { table: 'ledger_entries', concurrently: false },
  ]);
});

test('when a migration after the historic ones indexes a large table, then it builds concurrently, outside a transaction', () => {
  const offending = migrations
    .filter((m) => !HISTORIC.has(m.name))
    .flatMap((m) => {
      const indexes = largeIndexes(m.text);
      const plain = indexes
        .filter((i) => !i.concurrently)
        .map((i) => `${m.name}: CREATE INDEX on ${i.table} without CONCURRENTLY`);
      const inTransaction =
        indexes.some((i) => i.concurrently) && !/isTransactional\(\)\s*(?::\s*boolean\s*)?\{\s*return\s+false/.test(m.text)
          ? [`${m.name}: CREATE INDEX CONCURRENTLY needs isTransactional() { return false; }`]
          : [];
      return [...plain, ...inTransaction];
    });
  expect(offending).toEqual([]);
});

test('when migrations run, then each has its own transaction, so one can opt out of it', () => {
  const migrator = ormConfig('postgres://x@127.0.0.1/x').migrations!;
  expect(migrator.transactional).toBe(true);
  // allOrNothing would wrap every pending migration in one transaction, opted out or not.
  expect(migrator.allOrNothing).toBe(false);
});
