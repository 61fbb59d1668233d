import type { EntityManager } from '@mikro-orm/postgresql';
import { EmailTemplate } from '../../entities/email-template.entity';
import { checkTemplatePart, MailTemplateError, renderTemplate, type RenderOptions } from './template-engine';

export { MailTemplateError } from './template-engine';

/** The most a rendered mail (subject, text and html together) may hold, in characters: a preview's answer too. */
export const RENDERED_MAIL_MAX_CHARS = 256 * 1024;

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
 * time, so nothing rendered is stored, and an operator's edit applies to every mail not yet
 * sent. The service uses EmailTemplateRenderer (the `email_templates` table);
 * CodeTemplateRenderer renders templates given in code (tests, tools).
 */
export interface MailRenderer {
  /** `batch`: mails rendered together share it, so each template is read once for them all. */
  render(em: EntityManager, request: MailRenderRequest, batch?: RenderBatch): Promise<RenderedMail>;
}

/** The template rows read for one batch of mails, by key. */
export type RenderBatch = Map<string, Promise<EmailTemplate | null>>;

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

/** Renders one template with the placeholder rules of template-engine.ts. */
export function renderMail(template: MailTemplate, request: Omit<MailRenderRequest, 'template'>): RenderedMail {
  const locale = pickLocale(template, request.locale);
  const t = template.translations[locale]!;
  return { ...renderTranslation(t, request.data, request.secrets), locale };
}

/**
 * The three parts of one translation, within RENDERED_MAIL_MAX_CHARS together. Secrets reach
 * the body only; the subject's line breaks and other control characters become spaces, so no
 * value can add a header line.
 */
export function renderTranslation(
  t: MailTranslation,
  data: Record<string, unknown>,
  secrets: Record<string, string>,
  options: Pick<RenderOptions, 'deadline'> = {},
): Omit<RenderedMail, 'locale'> {
  const body = { ...data, ...secrets };
  let left = RENDERED_MAIL_MAX_CHARS;
  const part = (kind: 'subject' | 'text' | 'html', source: string, values: Record<string, unknown>) => {
    const out = renderTemplate(kind, source, values, { ...options, secrets: Object.keys(secrets), maxChars: left });
    left -= out.length;
    return out;
  };
  const subject = part('subject', t.subject, data).replace(/[\p{Cc}\u2028\u2029]+/gu, ' ');
  const text = part('text', t.text, body);
  const html = t.html === undefined || t.html === '' ? null : part('html', t.html, body);
  return { subject, text, html };
}

/** Renders the templates it was given. */
export class CodeTemplateRenderer implements MailRenderer {
  private readonly templates: Map<string, MailTemplate>;

  constructor(templates: readonly MailTemplate[]) {
    this.templates = new Map(templates.map((t) => [t.key, t]));
  }

  async render(_em: EntityManager, request: MailRenderRequest): Promise<RenderedMail> {
    const template = this.templates.get(request.template);
    if (!template) throw new MailTemplateError(`no mail template "${request.template}"`);
    return renderMail(template, request);
  }
}

/** Renders the operator-edited templates of the `email_templates` table, read at send time. */
export class EmailTemplateRenderer implements MailRenderer {
  async render(em: EntityManager, request: MailRenderRequest, batch?: RenderBatch): Promise<RenderedMail> {
    let read = batch?.get(request.template);
    if (!read) {
      read = em.findOne(EmailTemplate, { key: request.template }, { refresh: true });
      batch?.set(request.template, read);
    }
    const row = await read;
    if (!row) throw new MailTemplateError(`no mail template "${request.template}"`);
    // A part seen for the first time costs up to tens of milliseconds to check: one at a time,
    // with a turn of the event loop between them (the checks are cached for the render below).
    const t = row.translations[pickLocale(row, request.locale)];
    for (const [kind, source] of [
      ['subject', t?.subject],
      ['text', t?.text],
      ['html', t?.html],
    ] as const) {
      if (!source) continue;
      try {
        checkTemplatePart(kind, source, Object.keys(request.secrets));
      } catch {
        // renderMail reports it, as a MailTemplateError.
      }
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return renderMail({ key: row.key, defaultLocale: row.defaultLocale, translations: row.translations }, request);
  }
}

/** The translation for `de-AT`, else `de`, else the template's default. */
export function pickLocale(template: Pick<MailTemplate, 'defaultLocale' | 'translations'>, wanted: string): string {
  const available = Object.keys(template.translations);
  const find = (l: string) => available.find((a) => a.toLowerCase() === l.toLowerCase());
  return find(wanted) ?? find(wanted.split('-')[0]!) ?? template.defaultLocale;
}
