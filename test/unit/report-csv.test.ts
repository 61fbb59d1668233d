import { Writable } from 'node:stream';
import { writeCsv } from '../../src/domain/reports/formats/csv-format';
import { writeJson } from '../../src/domain/reports/formats/json-format';
import { csvCell, type ReportDocument, type Row } from '../../src/domain/reports/report-document';

/**
 * The report writers' cell rules (decisions, section 14): RFC 4180 CSV with a header row,
 * plain decimals, ISO 8601 UTC times, and text cells that could start a spreadsheet formula
 * prefixed with `'`. Which cells are text is decided by the column's type, never by the
 * value: a negative amount is a number and is written as it is.
 */
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

function doc(rows: Row[], extra: Partial<ReportDocument> = {}): ReportDocument {
  return {
    fileName: 't',
    title: 'T',
    subtitle: [],
    head: {},
    headTypes: {},
    summary: [],
    sections: [
      {
        key: 'rows',
        title: 'Rows',
        columns: [
          { key: 'ticket', label: 'Ticket', type: 'integer' },
          { key: 'profit', label: 'Profit', type: 'money' },
          { key: 'price', label: 'Price', type: 'number' },
          { key: 'time', label: 'Time', type: 'time' },
          { key: 'comment', label: 'Comment', type: 'text' },
        ],
        rows: async function* () {
          yield* rows;
        },
      },
    ],
    ...extra,
  };
}

test('when text cells start with =, +, - or @, then each is prefixed with a quote; other text is left alone', () => {
  expect(['=SUM(A1:A9)', '+1', '-2+3', '@cmd', 'plain', '', ' =x', "'quoted"].map((v) => csvCell('text', v))).toEqual([
    "'=SUM(A1:A9)",
    "'+1",
    "'-2+3",
    "'@cmd",
    'plain',
    '',
    ' =x',
    "'quoted",
  ]);
});

test('when numbers are negative, then money, integer and number cells are written as plain decimals, never prefixed', () => {
  expect([csvCell('money', '-1234.50'), csvCell('integer', '-7'), csvCell('number', '-0.00001'), csvCell('money', null)]).toEqual(
    ['-1234.50', '-7', '-0.00001', ''],
  );
});

test('when a report is written as CSV, then it is RFC 4180: a header row, CRLF, quoting only where needed, times in UTC', async () => {
  const { out, text } = collect();
  const outcome = await writeCsv(
    doc([
      {
        ticket: '100234',
        profit: '-18.70',
        price: '1.08425',
        time: new Date('2026-03-12T09:41:27.512Z'),
        comment: '=HYPERLINK("x")',
      },
      { ticket: '100235', profit: '2.00', price: '150.123', time: '2026-03-12T10:00:00.000Z', comment: 'line one\nline, two' },
    ]),
    out,
  );
  expect(outcome.rows).toBe(2);
  expect(text()).toBe(
    'ticket,profit,price,time,comment\r\n' +
      `100234,-18.70,1.08425,2026-03-12T09:41:27.512Z,"'=HYPERLINK(""x"")"\r\n` +
      '100235,2.00,150.123,2026-03-12T10:00:00.000Z,"line one\nline, two"\r\n',
  );
});

test('when a report has a summary and several sections, then the CSV is still one table, a section column naming each row', async () => {
  const { out, text } = collect();
  const base = doc([{ ticket: '1', profit: '5.00' }]);
  await writeCsv(
    {
      ...base,
      summary: [
        { key: 'opening_balance', label: 'Opening', type: 'money', value: '-3.00', csvColumn: 'profit' },
        { key: 'closing_balance', label: 'Closing', type: 'money', value: '2.00', csvColumn: 'profit' },
      ],
      sections: [
        ...base.sections,
        { key: 'more', title: 'More', columns: [{ key: 'note', label: 'Note', type: 'text' }], rows: async function* () {} },
      ],
    },
    out,
  );
  expect(text().split('\r\n')).toEqual([
    'section,ticket,profit,price,time,comment,note',
    'opening_balance,,-3.00,,,,',
    'rows,1,5.00,,,,',
    'closing_balance,,2.00,,,,',
    '',
  ]);
});

test('when a report is written as JSON, then numbers are numbers, money is decimal text and text is not prefixed', async () => {
  const { out, text } = collect();
  await writeJson(
    doc([{ ticket: '100234', profit: '-18.70', price: '1.08425', time: '2026-03-12T09:41:27.512Z', comment: '=x' }], {
      head: { login: '5001234' },
      headTypes: { login: 'integer' },
    }),
    out,
  );
  expect(JSON.parse(text())).toEqual({
    login: 5001234,
    rows: [{ ticket: 100234, profit: '-18.70', price: 1.08425, time: '2026-03-12T09:41:27.512Z', comment: '=x' }],
  });
});
