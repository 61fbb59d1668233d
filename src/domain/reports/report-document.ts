import type { Statement } from '../../platform/named-sql';

/**
 * What a report is before it has a format: a title, a few summary figures and tables
 * (sections) whose rows are read lazily, a row at a time. Each writer (CSV, PDF, JSON) walks
 * the same document, so the three formats of a report hold the same figures.
 *
 * A column's type decides how a value is written in every format:
 * - `integer` (logins, tickets, counts) and `number` (volumes, prices): JSON numbers; in CSV
 *   plain digits, never prefixed (a negative number is a number, not a formula);
 * - `money`: decimal text with two decimals (as the API's money), plain digits in CSV;
 * - `time`: ISO 8601 in UTC; `date`: `YYYY-MM-DD`;
 * - `text`: strings; in CSV a text cell beginning, after any leading spaces, with `=`, `+`,
 *   `-`, `@`, TAB or CR gets a `'` in front, so a spreadsheet never reads it as a formula;
 * - `json`: an object (JSON), its JSON text in CSV and PDF (text rules apply).
 */
export type ColumnType = 'integer' | 'number' | 'money' | 'time' | 'date' | 'text' | 'json';

export interface Column {
  key: string;
  label: string;
  type: ColumnType;
  /**
   * Words a reader sees in the PDF in place of a coded value (an order's cmd 0 and 1 read "Buy"
   * and "Sell"); CSV and JSON keep the value, which programs read.
   */
  words?: Record<string, string>;
}

/** A row as SQL answers it: numbers as text (exact), times as Date, json as objects. */
export type Row = Record<string, unknown>;

export interface Section {
  /** The JSON field holding its rows, and the CSV `section` value when a report has several. */
  key: string;
  title: string;
  columns: Column[];
  rows: () => AsyncIterable<Row>;
  /**
   * The statement `rows` reads, when every row comes straight from it (none computed in
   * code): the CSV writer then has Postgres write the records (csvRecords, COPY). Its columns
   * answer as text what the writers print: numbers as exact decimals, times as ISO 8601 UTC.
   */
  statement?: Statement;
}

/** A figure of the report as a whole (a statement's opening balance); in CSV a row of its own. */
export interface SummaryItem {
  key: string;
  label: string;
  type: ColumnType;
  value: unknown;
  /** The CSV column a summary row puts its value in. */
  csvColumn: string;
}

export interface ReportDocument {
  /** The file name without its extension. */
  fileName: string;
  title: string;
  /** Lines under the title (who, which period, when built). */
  subtitle: string[];
  /** Fields that open the JSON document, before the summary and the sections. */
  head: Row;
  headTypes: Record<string, ColumnType>;
  summary: SummaryItem[];
  sections: Section[];
}

/** The count of data rows written, over every section. */
export interface WriteOutcome {
  rows: number;
}

/** A value in the JSON form of its column type. */
export function jsonValue(type: ColumnType, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'integer':
    case 'number':
      return Number(value);
    case 'money':
      return String(value);
    case 'time':
      return value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString();
    case 'date':
      return value instanceof Date ? value.toISOString().slice(0, 10) : String(value);
    case 'json':
      return typeof value === 'string' ? JSON.parse(value) : value;
    case 'text':
      return String(value);
  }
}

/** A value as text, for CSV and PDF cells: numbers exactly as Postgres wrote them. */
export function textValue(type: ColumnType, value: unknown): string {
  if (value === null || value === undefined) return '';
  switch (type) {
    case 'time':
      return value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString();
    case 'date':
      return value instanceof Date ? value.toISOString().slice(0, 10) : String(value);
    case 'json':
      return typeof value === 'string' ? value : JSON.stringify(value);
    default:
      return String(value);
  }
}

/**
 * Cells a spreadsheet would read as a formula: `=`, `+`, `-` or `@` first, also behind leading
 * spaces (spreadsheets trim them), and TAB or CR first (some spreadsheets skip them too).
 */
const FORMULA_START = /^ *[=+\-@\t\r]/;

/** A CSV cell: text (and json) cells that could start a formula are prefixed with `'`; numbers never are. */
export function csvCell(type: ColumnType, value: unknown): string {
  const text = textValue(type, value);
  return (type === 'text' || type === 'json') && FORMULA_START.test(text) ? `'${text}` : text;
}
