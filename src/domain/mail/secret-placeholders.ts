import { randomBytes } from 'node:crypto';
import { Tokenizer, type Token, type TokenHandler } from 'parse5';

/**
 * The template values that carry a secret, as senders pass them in `secretData`. A `link` is
 * an absolute URL the service builds from its own configuration (the reset link from
 * PASSWORD_RESET_URL, the registration link from REGISTRATION_CONFIRM_URL); a `token` is bare. Senders may pass no other secret (mail-outbox.ts),
 * so these names are what a template is checked against before anyone sends with it.
 */
export const SECRET_PLACEHOLDERS = { reset_url: 'link', reset_token: 'token', confirm_url: 'link' } as const satisfies Record<
  string,
  'link' | 'token'
>;
export type SecretPlaceholder = keyof typeof SECRET_PLACEHOLDERS;
export const SECRET_PLACEHOLDER_NAMES = Object.keys(SECRET_PLACEHOLDERS) as SecretPlaceholder[];

export type TemplatePartKind = 'subject' | 'html' | 'text';

/** A checked template text: literal text and placeholder paths in the order rendering joins them. */
export type TemplateSegment = string | { readonly path: string };

/**
 * Elements whose content a browser does not parse as markup (raw text, script, foreign
 * content) or that load style sheets. A part that carries a
 * secret may use none of them: a style sheet can read a link through attribute selectors
 * (`a[href^="…token=a"] { background: url(https://elsewhere/a) }`), and raw-text content is
 * read differently by a browser than by the tokenizer below (see `htmlProblem`).
 */
const REFUSED_NEAR_SECRETS = new Set([
  'style',
  'link',
  'script',
  'noscript',
  'iframe',
  'xmp',
  'noembed',
  'noframes',
  'textarea',
  'title',
  'plaintext',
  'svg',
  'math',
]);

/**
 * Where a secret value may stand: a link as the whole `href` of an
 * `<a>` in `html`, any secret as a whole word in `text`, never in `subject` nor anywhere
 * else. The link's host is then always the service's configuration, never the template's.
 * Returns what is wrong, in a sentence, or undefined.
 */
export function secretPlacementProblem(
  kind: TemplatePartKind,
  segments: readonly TemplateSegment[],
  secrets: ReadonlyMap<string, 'link' | 'token'>,
): string | undefined {
  const used = segments.flatMap((s) => (typeof s !== 'string' && secrets.has(s.path) ? [s.path] : []));
  if (used.length === 0) return undefined;
  const name = `{{${used[0]}}}`;
  if (kind === 'subject') return `${name} carries a secret: it may not appear in the subject`;
  if (kind === 'text') return textProblem(segments, secrets);
  const token = used.find((p) => secrets.get(p) !== 'link');
  if (token !== undefined)
    return `{{${token}}} carries a secret that is not a link: in html it may not appear at all (use it in text, as a whole word)`;
  return htmlProblem(segments, secrets, name);
}

function textProblem(segments: readonly TemplateSegment[], secrets: ReadonlyMap<string, string>): string | undefined {
  // A secret must be set apart by whitespace (or the start or end of the text) on both sides,
  // so no text around it can turn it into part of another address (`https://elsewhere/{{reset_url}}`).
  // A neighbouring placeholder counts as a non-space: its value is not known here.
  const apart = (from: number, step: 1 | -1): boolean => {
    for (let i = from; i >= 0 && i < segments.length; i += step) {
      const s = segments[i]!;
      if (typeof s !== 'string') return false;
      if (s === '') continue;
      return /\s/.test(step === 1 ? s[0]! : s[s.length - 1]!);
    }
    return true;
  };
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    if (typeof s === 'string' || !secrets.has(s.path)) continue;
    if (!apart(i - 1, -1) || !apart(i + 1, 1))
      return `{{${s.path}}} carries a secret: in text it may only stand as a whole word, with a space or a line break on each side`;
  }
  return undefined;
}

/**
 * Runs the html through parse5's tokenizer (the WHATWG algorithm, so entities, quoting,
 * duplicate attributes and malformed tags are read as a mail client's browser engine reads
 * them), with a marker in place of each secret, and accepts only markers that are the whole
 * `href` of an `<a>` start tag. The tokenizer is used without parse5's tree builder on
 * purpose: tree building is quadratic in nesting depth (64 KiB of nested `<div>` take over a
 * second), and on this question it adds nothing once the elements that switch the tokenizer
 * out of its data state (raw text, foreign content) are refused: an `<a>` start tag always
 * makes an `<a>` element with the attributes the tokenizer read, and markers the tree builder
 * would drop are missing from the count.
 */
function htmlProblem(
  segments: readonly TemplateSegment[],
  secrets: ReadonlyMap<string, string>,
  name: string,
): string | undefined {
  const nonce = `s${randomBytes(8).toString('hex')}`;
  let placed = 0;
  const html = segments
    .map((s) => {
      if (typeof s === 'string') return s;
      // Other values are HTML-escaped, so they cannot open a tag or close a quoted attribute.
      if (!secrets.has(s.path)) return 'v';
      placed += 1;
      return `${nonce}n${placed}e`;
    })
    .join('');
  const whole = new RegExp(`^${nonce}n\\d+e$`);
  let accepted = 0;
  let problem: string | undefined;
  const elsewhere = (where: string) => {
    problem ??= `${name} carries a secret: in html it may only be the whole href of an <a> (<a href="${name}">), not ${where}`;
  };
  const look = (text: string | null | undefined, where: string) => {
    if (text?.includes(nonce)) elsewhere(where);
  };
  const tag = (t: Token.TagToken, start: boolean) => {
    look(t.tagName, 'a tag name');
    if (start && REFUSED_NEAR_SECRETS.has(t.tagName)) problem ??= `an html part that carries ${name} may not use <${t.tagName}>`;
    for (const a of t.attrs) {
      look(a.name, 'an attribute name');
      if (!a.value.includes(nonce)) continue;
      if (!start || t.tagName !== 'a' || a.name !== 'href') elsewhere(`the ${a.name} attribute of <${t.tagName}>`);
      else if (!whole.test(a.value)) elsewhere('part of a longer address');
      else accepted += 1;
    }
    // A ping attribute would post the link it sits on to an address of the template's choosing.
    if (start && t.tagName === 'a' && t.attrs.some((a) => a.name === 'ping' && t.attrs.some((h) => h.value.includes(nonce))))
      elsewhere('an <a> with a ping attribute');
  };
  const chars = (t: Token.CharacterToken) => look(t.chars, 'text');
  const handler: TokenHandler = {
    onStartTag: (t) => tag(t, true),
    onEndTag: (t) => tag(t, false),
    onComment: (t) => look(t.data, 'a comment'),
    onDoctype: (t) => look(`${t.name} ${t.publicId} ${t.systemId}`, 'a doctype'),
    onCharacter: chars,
    onNullCharacter: chars,
    onWhitespaceCharacter: chars,
    onEof: () => undefined,
  };
  new Tokenizer({ sourceCodeLocationInfo: false }, handler).write(html, true);
  if (problem === undefined && accepted !== placed) elsewhere('inside a tag the browser drops (a repeated attribute, say)');
  return problem;
}
