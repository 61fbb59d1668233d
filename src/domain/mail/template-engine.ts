import Handlebars from 'handlebars';

/**
 * Mail templates are Handlebars (strict mode) restricted to placeholders: `{{name}}` and
 * `{{path.to.value}}`, and `{{! comments }}`. Blocks, helpers, partials, `{{{raw}}}`, `this`,
 * `../` and `@data` are refused when a template is saved, so an operator's template can only
 * put values where it says, and the html part escapes every one of them (& < > " '). Subject and text get values as they are.
 */
const hb = Handlebars.create();

/** A mail that cannot be rendered: unknown template, a placeholder without a value. Retrying cannot help. */
export class MailTemplateError extends Error {
  override readonly name = 'MailTemplateError';
}

export class TemplateSyntaxError extends Error {
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

/**
 * Checks a template text and returns the placeholder paths it uses (`customer.first_name`),
 * in order, without repeats. Throws TemplateSyntaxError naming the line and column.
 */
export function templatePlaceholders(source: string): readonly string[] {
  return checked(source).placeholders;
}

function placeholdersOf(source: string): string[] {
  const program = parse(source);
  const found: string[] = [];
  for (const node of program.body as Node[]) {
    const at = (what: string): never => {
      throw new TemplateSyntaxError(what, node.loc?.start.line ?? 1, (node.loc?.start.column ?? 0) + 1);
    };
    if (node.type === 'ContentStatement' || node.type === 'CommentStatement') continue;
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
  }
  return found;
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
 * Checked texts, by source: their placeholders, and their compiled form once rendered. The
 * send-mail worker renders the same few texts again and again; each is parsed once.
 */
const cache = new Map<string, { placeholders: readonly string[]; template?: HandlebarsTemplateDelegate }>();
const CACHE_SIZE = 500;

function checked(source: string) {
  let entry = cache.get(source);
  if (!entry) {
    entry = { placeholders: placeholdersOf(source) };
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(source, entry);
  }
  return entry;
}

/**
 * Renders a checked template text: HTML-escaped values when `html`, as they are otherwise. A
 * placeholder without a text, number or boolean value is a MailTemplateError, never an empty
 * string: a mail with a hole in it is worse than none.
 */
export function renderTemplate(source: string, values: Record<string, unknown>, html: boolean): string {
  let entry: ReturnType<typeof checked>;
  try {
    entry = checked(source);
  } catch (err) {
    if (err instanceof TemplateSyntaxError) throw new MailTemplateError(`the template does not parse: ${err.message}`);
    throw err;
  }
  const missing = entry.placeholders.find((p) => valueAt(values, p) === undefined);
  if (missing !== undefined) throw new MailTemplateError(`no value for the placeholder {{${missing}}}`);
  // Values are escaped before rendering (escapeValues), so the engine never escapes again.
  const template = (entry.template ??= hb.compile(source, {
    strict: true,
    noEscape: true,
    knownHelpersOnly: true,
    knownHelpers: {},
  }));
  return template(html ? escapeValues(values) : values, {
    allowProtoPropertiesByDefault: false,
    allowProtoMethodsByDefault: false,
  });
}

/** HTML-escapes & < > " ' (enough for text and quoted attributes; a link's = and ` stay readable). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeValues(values: unknown): unknown {
  if (typeof values === 'string') return escapeHtml(values);
  if (typeof values === 'number' || typeof values === 'boolean') return escapeHtml(String(values));
  if (values !== null && typeof values === 'object' && !Array.isArray(values)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(values)) out[key] = escapeValues((values as Record<string, unknown>)[key]);
    return out;
  }
  return undefined;
}
