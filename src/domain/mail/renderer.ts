import type { EntityManager } from '@mikro-orm/postgresql';

export interface MailRenderRequest {
  template: string;
  /** The locale asked for (BCP 47); the renderer falls back to its language, then the template's default. */
  locale: string;
  /** Values for the subject and the body. */
  data: Record<string, unknown>;
  /** Values for the body only (a reset link): never available to the subject, so a rendered subject may be kept. */
  secrets: Record<string, string>;
}

export interface RenderedMail {
  subject: string;
  text: string;
  html: string | null;
  /** The translation used. */
  locale: string;
}

/**
 * Turns a template key, locale and data into a mail. The send-mail worker renders at send
 * time, so nothing rendered is stored. Templates live in code for now
 * (CodeTemplateRenderer); issue 11 replaces this with templates operators edit in the
 * `email_templates` table, hence the EntityManager.
 */
export interface MailRenderer {
  render(em: EntityManager, request: MailRenderRequest): Promise<RenderedMail>;
}

/** A mail that cannot be rendered: unknown template, a placeholder without a value. Retrying cannot help. */
export class MailTemplateError extends Error {
  override readonly name = 'MailTemplateError';
}

export interface MailTranslation {
  subject: string;
  text: string;
  html?: string;
}

export interface MailTemplate {
  key: string;
  defaultLocale: string;
  translations: Record<string, MailTranslation>;
}

/** Renders the templates it was given, with the placeholder rules of decisions section 6. */
export class CodeTemplateRenderer implements MailRenderer {
  private readonly templates: Map<string, MailTemplate>;

  constructor(templates: readonly MailTemplate[]) {
    this.templates = new Map(templates.map((t) => [t.key, t]));
  }

  async render(_em: EntityManager, request: MailRenderRequest): Promise<RenderedMail> {
    const template = this.templates.get(request.template);
    if (!template) throw new MailTemplateError(`no mail template "${request.template}"`);
    const locale = pickLocale(template, request.locale);
    const t = template.translations[locale]!;
    const body = { ...request.data, ...request.secrets };
    return {
      subject: fillPlaceholders(t.subject, request.data, false),
      text: fillPlaceholders(t.text, body, false),
      html: t.html === undefined ? null : fillPlaceholders(t.html, body, true),
      locale,
    };
  }
}

/** The translation for `de-AT`, else `de`, else the template's default (decisions section 6). */
export function pickLocale(template: MailTemplate, wanted: string): string {
  const available = Object.keys(template.translations);
  const find = (l: string) => available.find((a) => a.toLowerCase() === l.toLowerCase());
  return find(wanted) ?? find(wanted.split('-')[0]!) ?? template.defaultLocale;
}

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}\}/g;

/**
 * Replaces `{{name}}` and `{{path.to.value}}` with text, numbers or booleans from `values`,
 * HTML-escaped when `html`. A placeholder without such a value is an error, never an empty
 * string: a mail with a hole in it is worse than none.
 */
export function fillPlaceholders(source: string, values: Record<string, unknown>, html: boolean): string {
  return source.replace(PLACEHOLDER, (_match, path: string) => {
    let value: unknown = values;
    for (const part of path.split('.')) {
      value =
        value !== null && typeof value === 'object' && Object.prototype.hasOwnProperty.call(value, part)
          ? (value as Record<string, unknown>)[part]
          : undefined;
    }
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
      throw new MailTemplateError(`no value for the placeholder {{${path}}}`);
    return html ? escapeHtml(String(value)) : String(value);
  });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
