/**
 * Splits PostgreSQL text into the parts a placeholder may sit in (code) and the parts it
 * may not: string literals ('…', E'…' with backslash escapes), quoted identifiers ("…"),
 * dollar-quoted bodies ($$…$$, $tag$…$tag$), line comments (-- …) and block comments
 * (/* … *\/, nested as Postgres nests them). A rewrite of `:name` or `?` that only looks
 * at the code parts cannot touch a colon or question mark inside a literal or a comment.
 * An unterminated literal or comment runs to the end of the text, as the server reads it.
 */
export interface SqlPart {
  code: boolean;
  text: string;
}

const DOLLAR_TAG = /\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/y;
const IDENTIFIER_CHAR = /[A-Za-z0-9_$\u0080-\uffff]/;

export function splitSql(text: string): SqlPart[] {
  const parts: SqlPart[] = [];
  let codeStart = 0;
  let i = 0;
  const quoted = (end: number) => {
    if (i > codeStart) parts.push({ code: true, text: text.slice(codeStart, i) });
    parts.push({ code: false, text: text.slice(i, end) });
    i = end;
    codeStart = end;
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === "'") {
      // E'…' (an E not ending a longer identifier) takes backslash escapes.
      const escapes = /[eE]/.test(text[i - 1] ?? '') && !IDENTIFIER_CHAR.test(text[i - 2] ?? '');
      quoted(closeQuote(text, i, "'", escapes));
    } else if (c === '"') quoted(closeQuote(text, i, '"', false));
    else if (c === '-' && text[i + 1] === '-') {
      const newline = text.indexOf('\n', i);
      quoted(newline === -1 ? text.length : newline);
    } else if (c === '/' && text[i + 1] === '*') quoted(closeBlockComment(text, i));
    else if (c === '$' && !IDENTIFIER_CHAR.test(text[i - 1] ?? '')) {
      DOLLAR_TAG.lastIndex = i;
      const tag = DOLLAR_TAG.exec(text)?.[0];
      if (tag === undefined) i++;
      else {
        const close = text.indexOf(tag, i + tag.length);
        quoted(close === -1 ? text.length : close + tag.length);
      }
    } else i++;
  }
  if (codeStart < text.length) parts.push({ code: true, text: text.slice(codeStart) });
  return parts;
}

/** Applies `rewrite` to the code parts only and joins the text back together. */
export function rewriteSqlCode(text: string, rewrite: (code: string) => string): string {
  return splitSql(text)
    .map((part) => (part.code ? rewrite(part.text) : part.text))
    .join('');
}

/** The index just past the quote closing the one at `start`; a doubled quote is part of the text. */
function closeQuote(text: string, start: number, quote: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < text.length) {
    const c = text[i]!;
    if (backslashEscapes && c === '\\') i += 2;
    else if (c === quote && text[i + 1] === quote) i += 2;
    else if (c === quote) return i + 1;
    else i++;
  }
  return text.length;
}

function closeBlockComment(text: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < text.length) {
    if (text[i] === '/' && text[i + 1] === '*') {
      depth++;
      i += 2;
    } else if (text[i] === '*' && text[i + 1] === '/') {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else i++;
  }
  return text.length;
}
