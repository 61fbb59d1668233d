import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { jsonValue, type ReportDocument, type WriteOutcome } from '../report-document';

/** Text handed on at a time: large enough that the pipe is not busy with tiny writes. */
const BATCH_CHARS = 64 * 1024;

/**
 * One JSON object: the head fields, the summary figures, then each section as an array of
 * row objects, written row by row (never the whole document in memory).
 */
export async function writeJson(doc: ReportDocument, out: Writable): Promise<WriteOutcome> {
  const outcome: WriteOutcome = { rows: 0 };

  async function* text(): AsyncGenerator<string> {
    const fields = [
      ...Object.entries(doc.head).map(
        ([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(jsonValue(doc.headTypes[k] ?? 'text', v))}`,
      ),
      ...doc.summary.map((s) => `${JSON.stringify(s.key)}:${JSON.stringify(jsonValue(s.type, s.value))}`),
    ];
    let buffer = `{${fields.join(',')}`;
    let separator = fields.length > 0 ? ',' : '';
    for (const section of doc.sections) {
      buffer += `${separator}${JSON.stringify(section.key)}:[`;
      separator = ',';
      let first = true;
      for await (const row of section.rows()) {
        const item: Record<string, unknown> = {};
        for (const c of section.columns) item[c.key] = jsonValue(c.type, row[c.key]);
        buffer += (first ? '' : ',') + JSON.stringify(item);
        first = false;
        outcome.rows++;
        if (buffer.length >= BATCH_CHARS) {
          yield buffer;
          buffer = '';
        }
      }
      buffer += ']';
    }
    yield `${buffer}}\n`;
  }

  await pipeline(Readable.from(text()), out);
  return outcome;
}
