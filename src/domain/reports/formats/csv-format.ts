import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify/sync';
import { csvCell, type Column, type ReportDocument, type WriteOutcome } from '../report-document';

/**
 * RFC 4180 CSV (csv-stringify): a header row of column keys, CRLF line ends, fields quoted
 * only when they hold a comma, a quote, a CR or an LF. A report of one table is that table.
 * A report of several (a statement) is one table too, so every parser reads it: a first
 * column `section` names what each row is (`opening_balance`, `ledger`, `closed_orders`, ...),
 * and the other columns are the union of the sections' columns, each row filling its own.
 */
const BATCH_RECORDS = 1000;
// With an explicit record delimiter csv-stringify quotes only fields holding that delimiter
// (CRLF); a lone CR or LF would then end the row in every parser, so a customer's comment
// could forge rows. Every CR and LF is quoted.
const OPTIONS = { record_delimiter: 'windows', quote_record_delimiter: true } as const;

export async function writeCsv(doc: ReportDocument, out: Writable): Promise<WriteOutcome> {
  const sectioned = doc.sections.length > 1 || doc.summary.length > 0;
  const columns = sectioned ? unionOf(doc.sections.map((s) => s.columns)) : doc.sections[0]!.columns;
  const index = new Map(columns.map((c, i) => [c.key, i]));
  const width = columns.length + (sectioned ? 1 : 0);
  const offset = sectioned ? 1 : 0;
  const outcome: WriteOutcome = { rows: 0 };

  const summaryRow = (item: ReportDocument['summary'][number]) => {
    const record = new Array<string>(width).fill('');
    record[0] = item.key;
    record[offset + index.get(item.csvColumn)!] = csvCell(item.type, item.value);
    return record;
  };

  // Records go to csv-stringify a thousand at a time, and the rows are read in this one loop:
  // a stream step or an async generator per row cost more than the quoting itself.
  async function* text(): AsyncGenerator<string> {
    let batch: string[][] = [sectioned ? ['section', ...columns.map((c) => c.key)] : columns.map((c) => c.key)];
    for (const item of doc.summary.filter((s) => s.key === 'opening_balance')) batch.push(summaryRow(item));
    for (const section of doc.sections) {
      const cols = section.columns;
      const positions = cols.map((c) => offset + index.get(c.key)!);
      for await (const row of section.rows()) {
        const record = sectioned ? new Array<string>(width).fill('') : new Array<string>(width);
        if (sectioned) record[0] = section.key;
        for (let i = 0; i < cols.length; i++) record[positions[i]!] = csvCell(cols[i]!.type, row[cols[i]!.key]);
        batch.push(record);
        outcome.rows++;
        if (batch.length >= BATCH_RECORDS) {
          yield stringify(batch, OPTIONS);
          batch = [];
        }
      }
    }
    for (const item of doc.summary.filter((s) => s.key !== 'opening_balance')) batch.push(summaryRow(item));
    if (batch.length) yield stringify(batch, OPTIONS);
  }

  await pipeline(Readable.from(text()), out);
  return outcome;
}

/** Every column once, in the order of first appearance. */
function unionOf(lists: Column[][]): Column[] {
  const seen = new Map<string, Column>();
  for (const list of lists) for (const c of list) if (!seen.has(c.key)) seen.set(c.key, c);
  return [...seen.values()];
}
