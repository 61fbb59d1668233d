import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { auditInsertSql } from '../../src/domain/audit/audit';
import { eventInsertSql } from '../../src/domain/events/outbox';
import { ledgerInsertSql } from '../../src/domain/ledger/ledger';

/**
 * Each of these tables has one writer, the module that names its columns: everything else
 * composes that module's SQL fragment or calls its function. A second writer is how a column
 * added to one insert goes missing from another, and how a balance gets booked without its
 * ledger row.
 */
const OWNERS = [
  { table: 'ledger_entries', entity: 'LedgerEntry', owner: 'src/domain/ledger/ledger.ts' },
  { table: 'domain_events', entity: 'DomainEvent', owner: 'src/domain/events/outbox.ts' },
  { table: 'audit_entries', entity: 'AuditEntry', owner: 'src/domain/audit/audit.ts' },
  { table: 'webhook_attempts', entity: 'WebhookAttempt', owner: 'src/db/functions/webhook_attempts_record.sql' },
];

const root = join(__dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' ? [] : sources(path);
    // Stored functions' bodies too: a function can be a table's writer.
    return /\.(ts|sql)$/.test(entry.name) ? [relative(root, path)] : [];
  });
}

/** The files that write `table`: an SQL insert into it, or a MikroORM create or insert of its entity. */
function writersIn(files: Array<{ path: string; text: string }>, table: string, entity: string): string[] {
  const sql = new RegExp(`insert\\s+into\\s+${table}\\b`, 'i');
  const orm = new RegExp(`\\b(?:create|insert|insertMany|nativeInsert|upsert|upsertMany)\\(\\s*${entity}\\b|new\\s+${entity}\\(`);
  return files.filter((f) => sql.test(f.text) || orm.test(f.text)).map((f) => f.path);
}

const files = [...sources(join(root, 'src')), ...sources(join(root, 'bench'))].map((path) => ({
  path,
  text: readFileSync(join(root, path), 'utf8'),
}));

describe.each(OWNERS)('$table', ({ table, entity, owner }) => {
  test(`when the sources are scanned, then only ${owner} writes ${table}`, () => {
    expect(writersIn(files, table, entity)).toEqual([owner]);
  });
});

test('when a file writes a table it does not own, then the scan names it', () => {
  const stray = [
    { path: 'src/domain/orders/stray.ts', text: 'const X = `with a as (select 1) INSERT INTO ledger_entries (id) select 1`;' },
    { path: 'src/domain/orders/orm.ts', text: 'tx.create(DomainEvent, { type })' },
    { path: 'src/domain/ledger/ledger.ts', text: 'insert into ledger_entries_archive (id) values (1)' },
  ];
  expect(writersIn(stray, 'ledger_entries', 'LedgerEntry')).toEqual(['src/domain/orders/stray.ts']);
  expect(writersIn(stray, 'domain_events', 'DomainEvent')).toEqual(['src/domain/orders/orm.ts']);
});

test('when an event type or ledger kind is not a known one, then composing its insert fails at once', () => {
  const event = { aggregateType: 'order', aggregateId: ':t', customerId: ':c', data: ':d::jsonb', at: 'now()' };
  expect(() => eventInsertSql({ ...event, type: 'order.exploded' as 'order.closed' })).toThrow(/unknown event type/);
  expect(eventInsertSql({ ...event, type: 'order.closed' })).toMatch(/insert into domain_events .* 'order\.closed'/s);
  const row = {
    id: 'gen_random_uuid()',
    bookedAt: 'now()',
    accountId: 'a.id',
    amount: ':profit',
    balanceAfter: 'a.balance',
    referenceType: 'order',
    referenceId: ':ticket',
    comment: ':comment',
    from: 'a',
  };
  expect(() => ledgerInsertSql([{ ...row, kind: 'gift' as 'trade_profit' }])).toThrow(/unknown ledger kind/);
  expect(ledgerInsertSql([{ ...row, kind: 'trade_profit' }])).toMatch(/insert into ledger_entries .* 'trade_profit'/s);
  expect(auditInsertSql('g.created_at', 'g')).toMatch(/insert into audit_entries .*\sfrom g$/s);
});
