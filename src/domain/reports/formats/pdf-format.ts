import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import PDFDocument from 'pdfkit';
import { textValue, type Column, type ColumnType, type ReportDocument, type WriteOutcome } from '../report-document';
import { drawLine, registerFonts, widthOf, type TextStyle } from './pdf-text';

const MARGIN = 36;
const FONT_SIZE = 7;
const ROW_HEIGHT = 11;
const FOOTER_GAP = 18;

/** Widths (points) by column type; text columns share what is left. */
const WIDTH: Record<ColumnType, number> = {
  integer: 52,
  number: 58,
  money: 66,
  time: 78,
  date: 50,
  text: 0,
  json: 0,
};
const MIN_TEXT_WIDTH = 60;
const MAX_TEXT_WIDTH = 140;

const RIGHT_ALIGNED = new Set<ColumnType>(['integer', 'number', 'money']);

/**
 * A4 (landscape, for the width of an order's columns), the broker's name in the title, a page
 * number at the foot of every page, and each section as a table whose header row is drawn
 * again at the top of every page it runs onto. Pages are handed on as they fill (pdfkit
 * writes each page out when the next begins) and the writer waits whenever the file store
 * is behind, so a long report does not pile up in memory.
 */
export async function writePdf(doc: ReportDocument, out: Writable, brokerName: string): Promise<WriteOutcome> {
  const pdf = new PDFDocument({
    size: 'A4',
    layout: 'landscape',
    margins: { top: MARGIN, bottom: MARGIN + FOOTER_GAP, left: MARGIN, right: MARGIN },
    autoFirstPage: false,
    info: { Title: `${brokerName}: ${doc.title}`, Author: brokerName, Producer: brokerName, Creator: brokerName },
  });
  registerFonts(pdf);
  const outcome: WriteOutcome = { rows: 0 };
  let pageNumber = 0;
  // The footer sits below the bottom margin: with the margin lowered for it, pdfkit does not start a new page.
  pdf.on('pageAdded', () => {
    pageNumber++;
    const bottom = pdf.page.margins.bottom;
    pdf.page.margins.bottom = 0;
    pdf.fontSize(FONT_SIZE).fillColor('#555555');
    const footer = `Page ${pageNumber}`;
    drawLine(pdf, footer, (pdf.page.width - widthOf(pdf, footer, 'regular')) / 2, pdf.page.height - MARGIN, 'regular');
    pdf.page.margins.bottom = bottom;
    pdf.fillColor('#000000');
  });
  pdf.pipe(out);
  const done = finished(out);
  const paced = async () => {
    // pipe() pauses the document while the store is behind; go on once it has caught up.
    if (pdf.readableFlowing === false) await once(pdf, 'resume');
  };

  pdf.addPage();
  pdf.y = MARGIN;
  line(pdf, brokerName, 'bold', 16);
  line(pdf, doc.title, 'bold', 12);
  for (const text of doc.subtitle) line(pdf, text, 'regular', 9);
  if (doc.summary.length) {
    pdf.moveDown(0.5);
    for (const item of doc.summary) line(pdf, `${item.label}: ${textValue(item.type, item.value) || '-'}`, 'regular', 9);
  }

  const usable = pdf.page.width - 2 * MARGIN;
  const bottomLimit = () => pdf.page.height - pdf.page.margins.bottom;
  for (const section of doc.sections) {
    const widths = columnWidths(section.columns, usable);
    const header = () => {
      let x = MARGIN;
      const y = pdf.y;
      pdf
        .rect(MARGIN, y - 2, usable, ROW_HEIGHT)
        .fill('#e8e8e8')
        .fillColor('#000000');
      pdf.fontSize(FONT_SIZE);
      section.columns.forEach((c, i) => {
        cell(pdf, c.label, x, y, widths[i]!, RIGHT_ALIGNED.has(c.type), 'bold');
        x += widths[i]!;
      });
      pdf.y = y + ROW_HEIGHT;
    };
    const newPage = async () => {
      pdf.addPage();
      pdf.y = MARGIN;
      header();
      await paced();
    };
    pdf.moveDown(1);
    if (pdf.y + 3 * ROW_HEIGHT > bottomLimit()) await newPage();
    line(pdf, section.title, 'bold', 10);
    pdf.moveDown(0.3);
    header();
    let empty = true;
    for await (const row of section.rows()) {
      if (pdf.y + ROW_HEIGHT > bottomLimit()) await newPage();
      let x = MARGIN;
      const y = pdf.y;
      section.columns.forEach((c, i) => {
        const value = row[c.key];
        const shown = c.words ? (c.words[String(value)] ?? pdfText(c.type, value)) : pdfText(c.type, value);
        cell(pdf, shown, x, y, widths[i]!, RIGHT_ALIGNED.has(c.type) && !c.words, 'regular');
        x += widths[i]!;
      });
      pdf.y = y + ROW_HEIGHT;
      outcome.rows++;
      empty = false;
    }
    if (empty) {
      pdf.fontSize(FONT_SIZE);
      drawLine(pdf, 'None', MARGIN, pdf.y, 'oblique');
      pdf.y += ROW_HEIGHT;
    }
  }
  pdf.end();
  await done;
  return outcome;
}

/** Times without their milliseconds and zone letter: the subtitle says they are UTC. */
function pdfText(type: ColumnType, value: unknown): string {
  const text = textValue(type, value);
  return type === 'time' && text ? text.slice(0, 19).replace('T', ' ') : text;
}

/** A line at the left margin, the cursor moved below it. */
function line(pdf: PDFKit.PDFDocument, text: string, style: TextStyle, size: number): void {
  pdf.fontSize(size);
  const y = pdf.y;
  drawLine(pdf, text, MARGIN, y, style);
  pdf.y = y + pdf.currentLineHeight(true);
}

function cell(
  pdf: PDFKit.PDFDocument,
  text: string,
  x: number,
  y: number,
  width: number,
  right: boolean,
  style: TextStyle,
): void {
  const room = width - 4;
  let shown = text;
  if (widthOf(pdf, shown, style) > room) {
    // By code point, so a character outside the BMP (a rare CJK ideograph) is never cut in half.
    const chars = Array.from(shown);
    while (chars.length > 1 && widthOf(pdf, `${chars.join('')}…`, style) > room) chars.pop();
    shown = `${chars.join('')}…`;
  }
  const left = right ? x + width - 2 - widthOf(pdf, shown, style) : x + 2;
  drawLine(pdf, shown, left, y, style);
}

/** Fixed widths by type, text columns sharing the rest; scaled down together when they do not fit. */
function columnWidths(columns: Column[], usable: number): number[] {
  const fixed = columns.reduce((sum, c) => sum + WIDTH[c.type], 0);
  const flexible = columns.filter((c) => WIDTH[c.type] === 0).length;
  const share = flexible ? Math.min(MAX_TEXT_WIDTH, Math.max(MIN_TEXT_WIDTH, (usable - fixed) / flexible)) : 0;
  const widths = columns.map((c) => WIDTH[c.type] || share);
  const total = widths.reduce((a, b) => a + b, 0);
  const scale = total > usable ? usable / total : 1;
  return widths.map((w) => w * scale);
}
