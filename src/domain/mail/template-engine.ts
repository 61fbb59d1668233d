import Handlebars from 'handlebars';
import { SECRET_PLACEHOLDERS, secretPlacementProblem, type TemplatePartKind, type TemplateSegment } from './secret-placeholders';

export type { TemplatePartKind } from './secret-placeholders';

/**
 * Mail templates are Handlebars syntax restricted to placeholders: `{{name}}` and
 * `{{path.to.value}}`, and `{{! comments }}`. Blocks, helpers, partials, `{{{raw}}}`, `this`,
 * `../` and `@data` are refused when a template is saved, so an operator's template can only
 * put values where it says, and the html part escapes every one of them (& < > " '). Subject
 * and text get values as they are. Values that carry a secret may stand only where
 * secret-placeholders.ts allows.
 *
 * Limits, so that no template can hold up the process: a text is at
 * most TEMPLATE_TEXT_MAX_BYTES and has at most TEMPLATE_MAX_PLACEHOLDERS `{{`, counted before
 * Handlebars parses it (its parser is slow on many placeholders); a render
 * may be given a size cap and a deadline, both checked before the text is built.
 */
const hb = Handlebars.create();

export const TEMPLATE_TEXT_MAX_BYTES = 64 * 1024;
export const TEMPLATE_MAX_PLACEHOLDERS = 200;

/** A mail that cannot be rendered: unknown template, a placeholder without a value. Retrying cannot help. */
export class MailTemplateError extends Error {
  override readonly name: string = 'MailTemplateError';
}

/** The rendered text would be larger than the cap it was given. */
export class TemplateOutputTooLarge extends MailTemplateError {
  override readonly name = 'TemplateOutputTooLarge';
  constructor(
    readonly size: number,
    readonly max: number,
  ) {
    super(`the rendered text would be ${size} characters, more than ${max}`);
  }
}

/** Rendering ran past its deadline. */
export class TemplateRenderTimeout extends MailTemplateError {
  override readonly name = 'TemplateRenderTimeout';
}

/** A template text that breaks a rule: it is refused when saved, previewed or sent. */
export class TemplateCheckError extends Error {
  override readonly name: string = 'TemplateCheckError';
}

export class TemplateSyntaxError extends TemplateCheckError {
  override readonly name = 'TemplateSyntaxError';
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(`${message} (line ${line}, column ${column})`);
  }
}

type Node = hbs.AST.Node & { loc?: hbs.AST.SourceLocation };

function parse(source: string): hbs.AST.Program {
  prescan(source);
  try {
    return hb.parse(source);
  } catch (err) {
    const e = err as { message?: string; lineNumber?: number; column?: number };
    const loc = (hb as unknown as { Parser: { lexer: { yylloc?: { first_line: number; first_column: number } } } }).Parser.lexer
      .yylloc;
    const line = e.lineNumber ?? loc?.first_line ?? 1;
    const column = (e.column ?? loc?.first_column ?? 0) + 1;
    const lines = (e.message ?? 'the template does not parse').split('\n');
    const why =
      lines.length > 1 ? `${lines[0]!.replace(/ on line \d+:$/, '')}: ${lines.at(-1)}` : lines[0]!.replace(/ - \d+:\d+$/, '');
    throw new TemplateSyntaxError(why, line, column);
  }
}

const PLAIN_PART = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_PATH_PARTS = 4;
/** What may stand between {{ and }}: a name or a dotted path, with Handlebars' whitespace control. */
const PLACEHOLDER = new RegExp(`^~?\\s*([A-Za-z_]\\w*(?:\\.[A-Za-z_]\\w*){0,${MAX_PATH_PARTS - 1}})\\s*~?$`);

/**
 * Reads every `{{` of a text before Handlebars does, and lets through only comments and plain
 * placeholders (a name or a dotted path of at most MAX_PATH_PARTS parts), at most
 * TEMPLATE_MAX_PLACEHOLDERS of them. Handlebars' parser pays per token, and more than linearly
 * within one `{{...}}`, so a few hundred long placeholders could hold the event loop for
 * seconds. This scan is linear, so the parser only ever sees a few thousand tokens. It follows Handlebars' lexer: `\{{` is literal text, `\\{{` a backslash
 * and a placeholder, `{{!-- --}}` and `{{! }}` comments.
 */
function prescan(source: string): string[] {
  const bytes = Buffer.byteLength(source);
  if (bytes > TEMPLATE_TEXT_MAX_BYTES)
    throw new TemplateCheckError(`A template text is at most ${TEMPLATE_TEXT_MAX_BYTES} bytes; this one has ${bytes}`);
  const paths: string[] = [];
  let opened = 0;
  let from = 0;
  for (;;) {
    const at = source.indexOf('{{', from);
    if (at === -1) return paths;
    let slashes = 0;
    while (at - slashes - 1 >= 0 && source[at - slashes - 1] === '\\') slashes += 1;
    if (++opened > TEMPLATE_MAX_PLACEHOLDERS)
      throw new TemplateCheckError(
        `A template text has at most ${TEMPLATE_MAX_PLACEHOLDERS} placeholders ({{...}}, comments included); this one has more`,
      );
    if (slashes % 2 === 1) {
      from = at + 2;
      continue;
    }
    const syntax = (what: string): never => {
      const before = source.slice(0, at);
      const line = before.split('\n').length;
      throw new TemplateSyntaxError(what, line, at - before.lastIndexOf('\n'));
    };
    const open = /^\{\{~?!(--)?/.exec(source.slice(at, at + 6));
    if (open?.[1]) {
      const close = /--~?\}\}/g;
      close.lastIndex = at + open[0].length;
      const found = close.exec(source);
      if (!found) syntax('Parse error: this {{!-- has no closing --}}');
      from = found!.index + found![0].length;
      continue;
    }
    const end = source.indexOf('}}', at + (open ? open[0].length : 2));
    if (end === -1) syntax('Parse error: this {{ has no closing }}');
    from = end + 2;
    if (open) continue;
    const inner = source.slice(at + 2, end);
    const path = PLACEHOLDER.exec(inner)?.[1];
    if (path !== undefined && !/^this\b/.test(path)) {
      paths.push(path);
      continue;
    }
    if (/^[{&]/.test(inner)) syntax('{{{...}}} and {{& ...}} are not allowed: every value is escaped in html');
    if (/^~?\s*[#^/>*]|^~?\s*else\b/.test(inner)) syntax('only placeholders such as {{name}} or {{path.to.value}} are allowed');
    if (/^~?\s*[\w.]+\s+\S/.test(inner)) syntax('a placeholder is a name or a dotted path, without helpers or arguments');
    syntax(
      `"${inner.trim().slice(0, 40)}" is not a placeholder name: letters, digits and _, at most ${MAX_PATH_PARTS} parts joined by dots`,
    );
  }
}

/** A parsed text: its placeholders once each, in order, and the segments rendering joins. */
interface ParsedText {
  readonly placeholders: readonly string[];
  readonly segments: readonly TemplateSegment[];
  /** Secret placement verdicts by part kind and secret names: null when the text passes. */
  readonly verdicts: Map<string, string | null>;
}

/**
 * Checks a template text and returns the placeholder paths it uses (`customer.first_name`),
 * in order, without repeats. Throws TemplateSyntaxError naming the line and column, or
 * TemplateCheckError for a broken limit.
 */
export function templatePlaceholders(source: string): readonly string[] {
  return parsed(source).placeholders;
}

/**
 * The placeholders of a text already checked (a stored template), found by the linear scan
 * alone: listing many large templates must not run Handlebars' parser over each of them.
 */
export function listedPlaceholders(source: string): readonly string[] {
  const cached = cache.get(source);
  return cached ? cached.placeholders : [...new Set(prescan(source))];
}

/**
 * Checks one part of a translation: its syntax and limits, and where it puts the values that
 * carry a secret (the service's own, plus `extraSecrets`). Throws TemplateCheckError.
 */
export function checkTemplatePart(kind: TemplatePartKind, source: string, extraSecrets: readonly string[] = []): void {
  const entry = parsed(source);
  const key = `${kind}:${extraSecrets.join(',')}`;
  let verdict = entry.verdicts.get(key);
  if (verdict === undefined) {
    const secrets = new Map<string, 'link' | 'token'>(Object.entries(SECRET_PLACEHOLDERS));
    for (const name of extraSecrets) if (!secrets.has(name)) secrets.set(name, 'token');
    verdict = secretPlacementProblem(kind, entry.segments, secrets) ?? null;
    entry.verdicts.set(key, verdict);
  }
  if (verdict !== null) throw new TemplateCheckError(verdict);
}

function parseText(source: string): Omit<ParsedText, 'verdicts'> {
  const program = parse(source);
  const found: string[] = [];
  const segments: TemplateSegment[] = [];
  for (const node of program.body as Node[]) {
    const at = (what: string): never => {
      throw new TemplateSyntaxError(what, node.loc?.start.line ?? 1, (node.loc?.start.column ?? 0) + 1);
    };
    if (node.type === 'CommentStatement') continue;
    if (node.type === 'ContentStatement') {
      // `value`, not `original`: Handlebars has already applied whitespace control ({{~x}}).
      segments.push((node as hbs.AST.ContentStatement).value);
      continue;
    }
    if (node.type !== 'MustacheStatement') at('only placeholders such as {{name}} or {{path.to.value}} are allowed');
    const m = node as hbs.AST.MustacheStatement;
    const path = m.path as hbs.AST.PathExpression;
    if (path.type !== 'PathExpression' || m.params.length || (m.hash && m.hash.pairs.length))
      at('a placeholder is a name or a dotted path, without helpers or arguments');
    if (!m.escaped) at('{{{...}}} and {{& ...}} are not allowed: every value is escaped in html');
    if (path.data || path.depth > 0 || path.parts.length === 0 || !path.parts.every((p) => PLAIN_PART.test(p)))
      at(`"${path.original}" is not a placeholder name: letters, digits and _, joined by dots`);
    const name = path.parts.join('.');
    if (!found.includes(name)) found.push(name);
    segments.push({ path: name });
  }
  return { placeholders: found, segments };
}

/** The value at a dotted path, when it is text, a number or a boolean (own properties only). */
export function valueAt(values: Record<string, unknown>, path: string): string | number | boolean | undefined {
  let value: unknown = values;
  for (const part of path.split('.')) {
    value =
      value !== null && typeof value === 'object' && !Array.isArray(value) && Object.prototype.hasOwnProperty.call(value, part)
        ? (value as Record<string, unknown>)[part]
        : undefined;
  }
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : undefined;
}

/** Placeholders of `sources` that `values` does not resolve to text, a number or a boolean. */
export function unresolvedPlaceholders(sources: string[], values: Record<string, unknown>): string[] {
  const missing: string[] = [];
  for (const source of sources) {
    for (const p of templatePlaceholders(source)) if (valueAt(values, p) === undefined && !missing.includes(p)) missing.push(p);
  }
  return missing;
}

/**
 * Parsed texts, by source. The send-mail worker renders the same few texts again and again;
 * each is parsed and checked once.
 */
const cache = new Map<string, ParsedText>();
const CACHE_SIZE = 500;

function parsed(source: string): ParsedText {
  let entry = cache.get(source);
  if (!entry) {
    entry = { ...parseText(source), verdicts: new Map() };
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(source, entry);
  }
  return entry;
}

export interface RenderOptions {
  /** Names besides the service's own secrets whose values are secret (a sender's `secrets`). */
  secrets?: readonly string[];
  /** The largest result, in characters: a larger one is TemplateOutputTooLarge, found before it is built. */
  maxChars?: number;
  /** A `performance.now()` time after which rendering stops with TemplateRenderTimeout. */
  deadline?: number;
}

/**
 * Renders one checked part: HTML-escaped values in `html`, as they are otherwise. A
 * placeholder without a text, number or boolean value is a MailTemplateError, never an empty
 * string: a mail with a hole in it is worse than none. A text that breaks a rule (one checked
 * before a rule existed, or edited in SQL) is a MailTemplateError too.
 *
 * The segments are joined here rather than by a compiled Handlebars template: a text is only
 * literal runs and placeholders, so the result's size is known before it is built, and only
 * the values the text names are read (never the whole, possibly deep, `values` object).
 */
export function renderTemplate(
  kind: TemplatePartKind,
  source: string,
  values: Record<string, unknown>,
  options: RenderOptions = {},
): string {
  let entry: ParsedText;
  try {
    checkTemplatePart(kind, source, options.secrets);
    entry = parsed(source);
  } catch (err) {
    if (err instanceof TemplateSyntaxError) throw new MailTemplateError(`the template does not parse: ${err.message}`);
    if (err instanceof TemplateCheckError) throw new MailTemplateError(`the template breaks a rule: ${err.message}`);
    throw err;
  }
  const filled = new Map<string, string>();
  for (const p of entry.placeholders) {
    const value = valueAt(values, p);
    if (value === undefined) throw new MailTemplateError(`no value for the placeholder {{${p}}}`);
    filled.set(p, kind === 'html' ? escapeHtml(String(value)) : String(value));
  }
  let size = 0;
  for (const s of entry.segments) size += typeof s === 'string' ? s.length : filled.get(s.path)!.length;
  if (options.maxChars !== undefined && size > options.maxChars) throw new TemplateOutputTooLarge(size, options.maxChars);
  if (options.deadline !== undefined && performance.now() > options.deadline)
    throw new TemplateRenderTimeout('rendering took longer than its time budget');
  return entry.segments.map((s) => (typeof s === 'string' ? s : filled.get(s.path)!)).join('');
}

/** HTML-escapes & < > " ' (enough for text and quoted attributes; a link's = and ` stay readable). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
