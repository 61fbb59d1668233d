import { Writable } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import fc from 'fast-check';
import { REPORT_TYPES } from '../../src/entities/report.entity';
import { REPORT_SECTIONS } from '../../src/domain/reports/report-sources';
import { RecordEnds, writeCsv } from '../../src/domain/reports/formats/csv-format';
import { writeJson } from '../../src/domain/reports/formats/json-format';
import { type Column, csvCell, type ReportDocument, type Row } from '../../src/domain/reports/report-document';

/**
 * The report writers' cell rules: RFC 4180 CSV with a header row,
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

test('when text cells start with =, +, - , @, TAB or CR, also after spaces, then each is prefixed with a quote; other text is left alone', () => {
  expect(
    ['=SUM(A1:A9)', '+1', '-2+3', '@cmd', 'plain', '', ' =x', '  -1', '\t=x', '\r=x', "'quoted", 'a=b', '\n=x'].map((v) =>
      csvCell('text', v),
    ),
  ).toEqual(["'=SUM(A1:A9)", "'+1", "'-2+3", "'@cmd", 'plain', '', "' =x", "'  -1", "'\t=x", "'\r=x", "'quoted", 'a=b', '\n=x']);
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

/**
 * Values a customer's text (an order comment) or a name could carry, each a known way to break
 * out of a CSV cell or into a formula: bare line breaks, quotes, separators, leading spaces, TAB
 * or CR before a formula sign.
 */
const HOSTILE = [
  '=1\n=2',
  '=1\r=2',
  'a\r\nb,c',
  'x\n=2,3,4\n',
  '"quoted", and, commas',
  '"',
  ',',
  '\t=cmd|"/c calc"!A1',
  '\r=1+1',
  '  =SUM(A1:A9)',
  ' +1',
  '-2+3',
  '@SUM(1)',
  '=HYPERLINK("http://x.invalid","go")',
  "'already",
  '',
  'plain text',
];
const FORMULA = /^ *[=+\-@\t\r]/;

const PLAIN: Record<Exclude<Column['type'], 'text' | 'json'>, [unknown, string]> = {
  integer: ['-7', '-7'],
  number: ['-0.00001', '-0.00001'],
  money: ['-1234.50', '-1234.50'],
  time: [new Date('2026-03-12T09:41:27.512Z'), '2026-03-12T09:41:27.512Z'],
  date: ['2026-03-12', '2026-03-12'],
};

/** A cell's value and the text a CSV parser must read back from it. */
function cellOf(column: Column, hostile: string): [unknown, string] {
  if (column.type === 'text') return [hostile, FORMULA.test(hostile) ? `'${hostile}` : hostile];
  if (column.type === 'json') return [{ note: hostile }, JSON.stringify({ note: hostile })];
  return PLAIN[column.type];
}

describe.each(REPORT_TYPES)('when every text column of a %s report holds hostile values', (type) => {
  test('then a real CSV parser reads back exactly the rows written, each cell as written (formulas defused)', async () => {
    const sections = REPORT_SECTIONS[type];
    expect(sections.flatMap((s) => s.columns).some((c) => c.type === 'text' || c.type === 'json')).toBe(true);
    const summary: ReportDocument['summary'] =
      type === 'account_statement'
        ? [
            { key: 'opening_balance', label: 'Opening', type: 'money', value: '-3.00', csvColumn: 'balance_after' },
            { key: 'closing_balance', label: 'Closing', type: 'money', value: '2.00', csvColumn: 'balance_after' },
          ]
        : [];
    const expected: Array<{ section: string; cells: Record<string, string> }> = [];
    const document: ReportDocument = {
      fileName: type,
      title: type,
      subtitle: [],
      head: {},
      headTypes: {},
      summary,
      sections: sections.map(({ key, columns }) => {
        const rows = HOSTILE.map((hostile) => {
          const row: Row = {};
          const cells: Record<string, string> = {};
          for (const column of columns) [row[column.key], cells[column.key]] = cellOf(column, hostile);
          expected.push({ section: key, cells });
          return row;
        });
        return { key, title: key, columns, rows: fromRows(rows) };
      }),
    };
    const { out, text } = collect();
    const outcome = await writeCsv(document, out);
    expect(outcome.rows).toBe(HOSTILE.length * sections.length);

    // Spreadsheets end a row at CRLF, a lone LF or a lone CR: the parser is told so, and
    // insists every record has the header's width.
    const records: string[][] = parse(text(), { record_delimiter: ['\r\n', '\n', '\r'], relax_quotes: false });
    const [header, ...body] = records;
    const sectioned = sections.length > 1 || summary.length > 0;
    const dataRows = sectioned ? body.filter((r) => !summary.some((s) => s.key === r[0])) : body;
    expect(body).toHaveLength(expected.length + summary.length);
    expect(dataRows).toHaveLength(expected.length);
    dataRows.forEach((record, i) => {
      const { section, cells } = expected[i]!;
      const read = Object.fromEntries(header!.map((key, j) => [key, record[j]]));
      if (sectioned) expect(read.section).toBe(section);
      for (const [key, cell] of Object.entries(cells)) expect([key, read[key]]).toEqual([key, cell]);
      for (const key of header!) if (key !== 'section' && !(key in cells)) expect([key, read[key]]).toEqual([key, '']);
    });
  });
});

function fromRows(rows: Row[]): () => AsyncIterable<Row> {
  return async function* () {
    yield* rows;
  };
}

test('when COPY text reaches the writer in chunks cut anywhere, then every record ends in CRLF and line breaks inside fields stay', () => {
  const field = fc.oneof(fc.constantFrom('', 'a', '"', ',', '\n', '\r', '\r\n', 'é'), fc.string({ maxLength: 6 }));
  fc.assert(
    fc.property(
      fc.array(fc.array(field, { minLength: 1, maxLength: 4 }), { maxLength: 8 }),
      fc.array(fc.nat()),
      (records, cuts) => {
        const asCopy = Buffer.from(stringify(records, { record_delimiter: 'unix', quote_record_delimiter: true }));
        const points = [...new Set(cuts.map((c) => c % (asCopy.length + 1)))].sort((a, b) => a - b);
        const ends = new RecordEnds();
        const pieces = [0, ...points, asCopy.length].slice(1).map((end, i, all) => asCopy.subarray(i ? all[i - 1] : 0, end));
        const written = Buffer.concat(pieces.map((p) => ends.crlf(p))).toString('utf8');
        expect(written).toBe(stringify(records, { record_delimiter: 'windows', quote_record_delimiter: true }));
        expect(ends.rows).toBe(records.length);
      },
    ),
  );
});
