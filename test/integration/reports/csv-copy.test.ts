import { Writable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import { executeBound } from '../../../src/db/bound-statement';
import { SnapshotReader } from '../../../src/db/snapshot-reader';
import { ledgerInsertSql } from '../../../src/domain/ledger/ledger';
import { writeCsv } from '../../../src/domain/reports/formats/csv-format';
import { documentFor } from '../../../src/domain/reports/report-sources';
import type { ReportType } from '../../../src/entities/report.entity';
import { EVERY_CUSTOMER, type CustomerScope } from '../../../src/platform/customer-scope';
import { namedStatement } from '../../../src/platform/named-sql';
import { adminToken, createCustomer } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';
import { fundedAccount, setQuote, setUpMarket } from '../../helpers/trading';
import { expectOk } from '../trading/trading-kit';
import { csvObjects } from './report-kit';

/**
 * The statement's and the trades' CSV rows are written by Postgres (COPY), the header and the
 * summary rows by csv-stringify: the file is byte for byte what the writer makes of the same
 * rows read one at a time, also for text a customer or an integrator chose (formulas, quotes,
 * separators, line breaks, non-Latin script).
 */
jest.setTimeout(120_000);

let app: TestApp;
let login: number;

const today = () => new Date().toISOString().slice(0, 10);

const HOSTILE = [
  '=1\n=2',
  '=1\r=2,=3',
  'a\r\nb,c',
  '"quoted", and, commas',
  '\t=cmd|"/c calc"!A1',
  '  =SUM(A1:A9)',
  ' +1',
  '-2+3',
  '@SUM(1)',
  "'already",
  'back\\slash',
  'Иван, 名前 ✓',
  ' ',
  'plain',
];

beforeAll(async () => {
  app = await startTestApp({ label: 'csv-copy' });
  // The bookings below cross from five digits to six: the statement orders them as numbers.
  await sql(app, `select setval('ledger_booking_seq', 99990)`);
  const admin = await adminToken(app);
  const customer = await createCustomer(app, admin);
  const { groupId } = await setUpMarket(app, admin);
  login = await fundedAccount(app, admin, customer.id, groupId, 1000);
  await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
  for (const comment of HOSTILE) {
    const ticket = expectOk(
      await app.request('POST', '/orders', { token: admin, body: { login, symbol: 'EURUSD', cmd: 1, volume: 0.01, comment } }),
      201,
    ).order;
    expectOk(await app.request('POST', `/orders/${ticket}/close`, { token: admin }), 200);
  }
  // Rows of nothing whose references hold the same texts: the ledger's text columns get them too.
  const booked = ledgerInsertSql([
    {
      id: 'gen_random_uuid()',
      bookedAt: 'now()',
      accountId: 'a.id',
      kind: 'deposit',
      amount: '0.00',
      balanceAfter: 'a.balance',
      referenceType: 'deposit',
      referenceId: 'h.text',
      comment: 'null',
      from: 'accounts a, unnest(?::text[]) h(text) where a.login = ?::bigint',
    },
  ]);
  await executeBound(app.runtime.services.orm.em.fork() as EntityManager, { sql: booked, values: [HOSTILE, String(login)] });
});
afterAll(() => app?.stop());

function collect(): { out: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk);
      done();
    },
  });
  return { out, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** The CSV of one report, written row by row and through COPY, in one snapshot. */
async function bothWays(type: ReportType, params: unknown, scope: CustomerScope = EVERY_CUSTOMER) {
  const em = app.runtime.services.orm.em.fork() as EntityManager;
  const reader = await SnapshotReader.open(em);
  try {
    const doc = await documentFor(type, params, { em, reader, quotes: app.runtime.services.quotes, now: new Date(), scope });
    const byRow = collect();
    const byRowOutcome = await writeCsv(doc, byRow.out);
    const copied = collect();
    const copiedOutcome = await writeCsv(doc, copied.out, (statement) => reader.copyCsv(statement));
    return { byRow: byRow.text(), copied: copied.text(), byRowRows: byRowOutcome.rows, copiedRows: copiedOutcome.rows };
  } finally {
    await reader.close();
  }
}

test('when a statement is written through COPY, then the file is byte for byte the row-by-row one', async () => {
  const { byRow, copied, byRowRows, copiedRows } = await bothWays('account_statement', { login, from: today(), to: today() });
  // Ledger: the deposit, each close's profit and the hostile rows; then the closed orders; none open.
  expect(byRowRows).toBe(1 + 3 * HOSTILE.length);
  expect(copiedRows).toBe(byRowRows);
  expect(copied).toBe(byRow);
  expect(copied).toContain(`,"'=1\r=2,=3"`);
  const seqs = csvObjects(copied)
    .filter((r) => r.section === 'ledger')
    .map((r) => Number(r.seq));
  expect(seqs[0]).toBeLessThan(100_000);
  expect(seqs.at(-1)).toBeGreaterThanOrEqual(100_000);
  expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
});

test('when trades are written through COPY, then the file is byte for byte the row-by-row one', async () => {
  const { byRow, copied, byRowRows, copiedRows } = await bothWays('trades', { from: today(), to: today(), login });
  expect(byRowRows).toBe(HOSTILE.length);
  expect(copiedRows).toBe(byRowRows);
  expect(copied).toBe(byRow);
  expect(copied).toContain(`"'\t=cmd|""/c calc""!A1"\r\n`);
});

test('when a limited staff scope asks for trades through COPY, then its scope is applied as with parameters', async () => {
  const scope: CustomerScope = { customerId: null, staff: { userId: '00000000-0000-4000-8000-000000000000', teamIds: [] } };
  const { copied, copiedRows } = await bothWays('trades', { from: today(), to: today() }, scope);
  expect(copiedRows).toBe(0);
  expect(copied.split('\r\n')).toEqual([expect.stringMatching(/^login,ticket,/), '']);
});

test('when a COPY is left before its end, then closing the reader does not wait for it and the pool stays usable', async () => {
  const em = app.runtime.services.orm.em.fork() as EntityManager;
  const reader = await SnapshotReader.open(em);
  const many = namedStatement<{ pad: string; n: number }>(
    'select g, repeat(:pad, 100) as pad from generate_series(1, :n) g',
  ).bind({
    pad: 'x',
    n: 2_000_000,
  });
  for await (const chunk of reader.copyCsv(many)) {
    expect((chunk as Buffer).length).toBeGreaterThan(0);
    break;
  }
  await reader.close();
  const [row] = await sql<{ one: number }>(app, 'select 1 as one');
  expect(row!.one).toBe(1);
});
