import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify/sync';
import type { Statement } from '../../../platform/named-sql';
import { csvCell, type Column, type ReportDocument, type Section, type WriteOutcome } from '../report-document';
import { csvRecords } from '../reports.queries';

/**
 * RFC 4180 CSV: a header row of column keys, CRLF line ends, fields quoted only when they
 * hold a comma, a quote, a CR or an LF. A report of one table is that table. A report of
 * several (a statement) is one table too, so every parser reads it: a first column `section`
 * names what each row is (`opening_balance`, `ledger`, `closed_orders`, ...), and the other
 * columns are the union of the sections' columns, each row filling its own.
 *
 * A section read straight from a statement is written by Postgres when the writer is given a
 * way to COPY: `COPY (csvRecords(...)) TO STDOUT WITH (FORMAT csv)` quotes as csv-stringify
 * does below, defuses text cells in SQL, and only its record ends are changed here (LF to
 * CRLF). The rest (header, summary rows, rows computed in code) goes through csv-stringify.
 */
const BATCH_RECORDS = 1000;
// With an explicit record delimiter csv-stringify quotes only fields holding that delimiter
// (CRLF); a lone CR or LF would then end the row in every parser, so a customer's comment
// could forge rows. Every CR and LF is quoted.
const OPTIONS = { record_delimiter: 'windows', quote_record_delimiter: true } as const;

/** `COPY (statement) TO STDOUT` as CSV, one LF after each record (SnapshotReader.copyCsv). */
export type CsvCopy = (statement: Statement) => Readable;

export async function writeCsv(doc: ReportDocument, out: Writable, copy?: CsvCopy): Promise<WriteOutcome> {
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

  /** The section's records as COPY writes them, in the file's column layout. */
  const copied = (copy: CsvCopy, section: Section, statement: Statement): AsyncIterable<Buffer> => {
    const own = new Map(section.columns.map((c) => [c.key, c]));
    const cells = columns.map((c) => own.get(c.key) ?? null);
    return copy(csvRecords(statement, sectioned ? section.key : null, cells));
  };

  // Records go to csv-stringify a thousand at a time, and the rows are read in this one loop:
  // a stream step or an async generator per row cost more than the quoting itself.
  async function* text(): AsyncGenerator<string | Buffer> {
    let batch: string[][] = [sectioned ? ['section', ...columns.map((c) => c.key)] : columns.map((c) => c.key)];
    for (const item of doc.summary.filter((s) => s.key === 'opening_balance')) batch.push(summaryRow(item));
    for (const section of doc.sections) {
      if (copy && section.statement) {
        if (batch.length) yield stringify(batch, OPTIONS);
        batch = [];
        const ends = new RecordEnds();
        for await (const chunk of copied(copy, section, section.statement)) yield ends.crlf(chunk);
        outcome.rows += ends.rows;
        continue;
      }
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

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;

/**
 * COPY ends a record with LF; the file ends every record with CRLF. An LF inside a quoted
 * field is the field's own and stays as it is: COPY writes a quote only around a field or
 * doubled inside one, so each quote flips whether the text is inside a field (a doubled one
 * flips twice), carried from one chunk to the next. Each chunk is scanned with indexOf, a
 * call per record end and per quote, rather than a step per byte.
 */
export class RecordEnds {
  /** Records ended so far. */
  rows = 0;
  private quoted = false;

  crlf(chunk: Buffer): Buffer {
    const ends: number[] = [];
    let quote = chunk.indexOf(QUOTE);
    for (let lf = chunk.indexOf(LF); lf !== -1; lf = chunk.indexOf(LF, lf + 1)) {
      for (; quote !== -1 && quote < lf; quote = chunk.indexOf(QUOTE, quote + 1)) this.quoted = !this.quoted;
      if (!this.quoted) ends.push(lf);
    }
    for (; quote !== -1; quote = chunk.indexOf(QUOTE, quote + 1)) this.quoted = !this.quoted;
    if (ends.length === 0) return chunk;
    this.rows += ends.length;
    const out = Buffer.allocUnsafe(chunk.length + ends.length);
    let from = 0;
    let at = 0;
    for (const end of ends) {
      at += chunk.copy(out, at, from, end);
      out[at++] = CR;
      from = end;
    }
    chunk.copy(out, at, from);
    return out;
  }
}
