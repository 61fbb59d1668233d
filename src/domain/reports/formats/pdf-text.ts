import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { create, type Font } from 'fontkit';

/**
 * Text in a PDF in any script a customer's name may be written in. The standard PDF fonts
 * (Helvetica) carry Latin-1 only: a Cyrillic, Greek, Arabic or Chinese name came out as
 * garbage. Every string is drawn with embedded fonts instead (subset to the glyphs used, with
 * their Unicode mapping, so a reader can copy and search the text):
 *
 * - DejaVu Sans first: Latin, Greek, Cyrillic, Arabic, Hebrew, Armenian, Georgian and most
 *   symbols, in regular, bold and oblique;
 * - Noto Sans CJK (Simplified Chinese, with kana) for the characters DejaVu lacks.
 *
 * Each character is drawn with the first font of the chain that has a glyph for it; one that
 * none has is drawn with the first (its "missing" box), never dropped silently. Right-to-left
 * words (Arabic, Hebrew) are laid out in visual order word by word; the font's shaper joins
 * and mirrors the letters inside a word.
 */

export type TextStyle = 'regular' | 'bold' | 'oblique';

interface FontFile {
  /** The name the PDF document registers it under. */
  name: string;
  bytes: Buffer;
  font: Font;
}

const dejavu = (file: string) => require.resolve(`dejavu-fonts-ttf/ttf/${file}`);
// The package's exports name only its index; the font files sit beside it.
const notoSc = (file: string) => join(dirname(require.resolve('@embedpdf/fonts-sc')), '..', 'fonts', file);

const FILES: Record<TextStyle, string[]> = {
  regular: [dejavu('DejaVuSans.ttf'), notoSc('NotoSansHans-Regular.otf')],
  bold: [dejavu('DejaVuSans-Bold.ttf'), notoSc('NotoSansHans-Bold.otf')],
  oblique: [dejavu('DejaVuSans-Oblique.ttf'), notoSc('NotoSansHans-Regular.otf')],
};

let loaded: Record<TextStyle, FontFile[]> | undefined;

/** The font files, read and parsed once per process (the CJK font is several MiB). */
function chains(): Record<TextStyle, FontFile[]> {
  if (loaded) return loaded;
  const byPath = new Map<string, FontFile>();
  const load = (path: string): FontFile => {
    let file = byPath.get(path);
    if (!file) {
      const bytes = readFileSync(path);
      const font = create(bytes) as Font;
      file = { name: `f${byPath.size}`, bytes, font };
      byPath.set(path, file);
    }
    return file;
  };
  loaded = {
    regular: FILES.regular.map(load),
    bold: FILES.bold.map(load),
    oblique: FILES.oblique.map(load),
  };
  return loaded;
}

/** Registers every font of the chains with a document; call once per document. */
export function registerFonts(pdf: PDFKit.PDFDocument): void {
  const seen = new Set<string>();
  for (const chain of Object.values(chains()))
    for (const file of chain) {
      if (seen.has(file.name)) continue;
      seen.add(file.name);
      pdf.registerFont(file.name, file.bytes);
    }
}

const RTL = /[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}]/u;
const LETTER = /\p{L}/u;
/** A word read right to left: it has right-to-left letters and no letter of another script. */
const isRtl = (word: string) => RTL.test(word) && !Array.from(word).some((ch) => LETTER.test(ch) && !RTL.test(ch));

/** A piece of text drawn with one font, in visual (left to right) order. */
export interface Piece {
  text: string;
  font: string;
}

/** Splits a word into the longest pieces one font of the chain draws. */
function byFont(word: string, chain: FontFile[]): Piece[] {
  const pieces: Piece[] = [];
  for (const ch of word) {
    const cp = ch.codePointAt(0)!;
    const file = chain.find((f) => f.font.hasGlyphForCodePoint(cp)) ?? chain[0]!;
    const last = pieces.at(-1);
    if (last && last.font === file.name) last.text += ch;
    else pieces.push({ text: ch, font: file.name });
  }
  return pieces;
}

/**
 * The words of a line in visual order: a run of right-to-left words (with the spaces between
 * them) is reversed as a whole, and in a line whose first strong character is right-to-left
 * the runs themselves go right to left. Enough for names, addresses and table cells; a
 * paragraph with nested embeddings would need the full bidirectional algorithm.
 */
export function visualWords(text: string): string[] {
  // Runs of words of one direction, and between each two runs the spaces that separate them.
  const items: Array<{ rtl: boolean; words: string[] } | string> = [];
  for (const token of text.split(/(\s+)/)) {
    if (token === '') continue;
    const last = items.at(-1);
    if (/^\s+$/.test(token)) {
      if (typeof last === 'string') items[items.length - 1] = last + token;
      else items.push(token);
      continue;
    }
    const rtl = isRtl(token);
    const run = items.at(-2);
    if (typeof last === 'string' && run && typeof run !== 'string' && run.rtl === rtl) {
      run.words.push(last, token);
      items.pop();
    } else if (last && typeof last !== 'string' && last.rtl === rtl) last.words.push(token);
    else items.push({ rtl, words: [token] });
  }
  const firstRun = items.find((i) => typeof i !== 'string');
  const ordered = firstRun && typeof firstRun !== 'string' && firstRun.rtl ? [...items].reverse() : items;
  return ordered.flatMap((item) => (typeof item === 'string' ? [item] : item.rtl ? [...item.words].reverse() : item.words));
}

/** A line of text as pieces, each with the font that draws it, in visual order. */
export function pieces(text: string, style: TextStyle): Piece[] {
  const chain = chains()[style];
  // Most cells (figures, times, symbols) are printable ASCII, which the first font draws left to right.
  if (/^[\x20-\x7e]*$/.test(text)) return [{ text, font: chain[0]!.name }];
  return visualWords(text).flatMap((word) => byFont(word, chain));
}

/** The width of a line at the document's current font size. */
export function widthOf(pdf: PDFKit.PDFDocument, text: string, style: TextStyle): number {
  let width = 0;
  for (const piece of pieces(text, style)) width += pdf.font(piece.font).widthOfString(piece.text);
  return width;
}

/** Draws one line (no wrapping) at x, y with the document's current font size and colour. */
export function drawLine(pdf: PDFKit.PDFDocument, text: string, x: number, y: number, style: TextStyle): void {
  let at = x;
  for (const piece of pieces(text, style)) {
    pdf.font(piece.font).text(piece.text, at, y, { lineBreak: false });
    at += pdf.widthOfString(piece.text);
  }
}
