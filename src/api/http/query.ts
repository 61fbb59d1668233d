import { parse, type ParsedUrlQuery } from 'node:querystring';
import { z } from 'zod';

/** A boolean query parameter: true/false (also 1/0); anything else is 422 bool_parsing. */
export const queryBool = () =>
  z.string().transform((v, ctx) => {
    if (v === 'true' || v === '1') return true;
    if (v === 'false' || v === '0') return false;
    ctx.addIssue({
      code: 'custom',
      message: 'Input should be a valid boolean, unable to interpret input',
      params: { type: 'bool_parsing' },
    });
    return z.NEVER;
  });

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes one percent-encoded query key or value. Node's own decoder turns bytes that are
 * not UTF-8 (`%FF`, or `%ED%A0%80`, the bytes a lone surrogate would take) into U+FFFD, so
 * `?action=%ED%A0%80` silently became a search for three replacement characters. Here every
 * byte above 0x7F of a component that is not UTF-8 becomes a lone surrogate, U+DC80 to
 * U+DCFF (Python's "surrogateescape"), which the text rule of safe-input.ts refuses before
 * any schema runs: 422 string_unicode at that parameter, as for a lone surrogate in a body.
 * A `%` not followed by two hex digits stays as written, as before.
 */
export function decodeQueryComponent(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    const bytes = percentDecoded(text);
    try {
      return UTF8.decode(bytes);
    } catch {
      return Array.from(bytes, (b) => String.fromCharCode(b < 0x80 ? b : 0xdc00 + b)).join('');
    }
  }
}

/** The bytes of `text` with every %XX escape decoded; everything else, a stray `%` included, as UTF-8. */
function percentDecoded(text: string): Buffer {
  const parts: Buffer[] = [];
  let last = 0;
  for (const run of text.matchAll(/(?:%[0-9A-Fa-f]{2})+/g)) {
    parts.push(Buffer.from(text.slice(last, run.index), 'utf8'), Buffer.from(run[0].replaceAll('%', ''), 'hex'));
    last = run.index + run[0].length;
  }
  parts.push(Buffer.from(text.slice(last), 'utf8'));
  return Buffer.concat(parts);
}

/** The `query parser` of the app: node:querystring (express's "simple"), decoding strictly. */
export function parseQuery(text: string): ParsedUrlQuery {
  return parse(text, '&', '=', { decodeURIComponent: decodeQueryComponent });
}
