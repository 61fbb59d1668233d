import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { EmailTemplate, type TemplateTranslation } from '../../entities/email-template.entity';
import { AppError, errors, fieldError, ValidationFailure, type ValidationItem } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import type { StaffCaller } from '../../platform/caller';
import { pickLocale, RENDERED_MAIL_MAX_CHARS, renderTranslation } from './renderer';
import {
  checkTemplatePart,
  TEMPLATE_TEXT_MAX_BYTES,
  TemplateCheckError,
  TemplateOutputTooLarge,
  listedPlaceholders,
  TemplateRenderTimeout,
  TemplateSyntaxError,
  unresolvedPlaceholders,
} from './template-engine';
import { flushUnique } from '../../db/flush-unique';

export const TemplateKey = z
  .string()
  .regex(/^[a-z][a-z0-9_.-]{0,63}$/, { message: 'A key is 1 to 64 of a-z 0-9 _ . - starting with a letter' })
  .describe('What senders ask for (`password_reset`); unique');

export const Locale = z
  .string()
  .max(35)
  .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/, { message: 'A locale is a BCP 47 language tag such as en, de or de-AT' })
  .describe('BCP 47 language tag: `en`, `de`, `de-AT`');

/** At most TEMPLATE_TEXT_MAX_BYTES of UTF-8; characters are counted first, cheaply. */
const TemplateText = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((s) => Buffer.byteLength(s) <= TEMPLATE_TEXT_MAX_BYTES, {
      message: `String should have at most ${TEMPLATE_TEXT_MAX_BYTES} bytes`,
      params: { type: 'string_too_long' },
    });

export const TranslationSchema = z.object({
  subject: TemplateText(998).refine((s) => !/[\r\n]/.test(s), { message: 'A subject is one line' }),
  html: TemplateText(TEMPLATE_TEXT_MAX_BYTES),
  text: TemplateText(TEMPLATE_TEXT_MAX_BYTES),
});

export const TranslationsSchema = z
  .record(z.string().max(35), TranslationSchema)
  .refine((t) => Object.keys(t).length >= 1 && Object.keys(t).length <= 50, {
    message: 'Between 1 and 50 translations',
  })
  .describe('Per locale (BCP 47 tag as the key): `subject`, `html` and `text`, each with `{{placeholders}}`');

export const NewTemplateSchema = z.object({
  key: TemplateKey,
  name: z.string().min(1).max(200),
  default_locale: Locale,
  translations: TranslationsSchema,
});

export const TemplatePatchSchema = z.object({
  key: TemplateKey.optional(),
  name: z.string().min(1).max(200).optional(),
  default_locale: Locale.optional(),
  translations: TranslationsSchema.optional(),
});

export const EmailTemplateSchema = z.object({
  id: z.uuid(),
  key: z.string(),
  name: z.string(),
  default_locale: z.string(),
  translations: z.record(z.string(), z.object({ subject: z.string(), html: z.string(), text: z.string() })),
  placeholders: z.array(z.string()).describe('Every placeholder any translation uses, in order of appearance'),
  built_in: z
    .boolean()
    .describe('A mail the service sends itself: its texts may be edited, its key not, and it cannot be deleted'),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type EmailTemplateView = z.output<typeof EmailTemplateSchema>;

export const PreviewSchema = z.object({
  subject: z.string(),
  html: z.string(),
  text: z.string(),
  locale: z.string().describe('The translation used'),
});

export function emailTemplateView(t: EmailTemplate): EmailTemplateView {
  const placeholders: string[] = [];
  for (const tr of Object.values(t.translations)) {
    for (const source of [tr.subject, tr.html, tr.text]) {
      try {
        for (const p of listedPlaceholders(source)) if (!placeholders.includes(p)) placeholders.push(p);
      } catch {
        // Stored templates were checked on save; a built-in one edited in SQL shows what it can.
      }
    }
  }
  return {
    id: t.id,
    key: t.key,
    name: t.name,
    default_locale: t.defaultLocale,
    translations: t.translations,
    placeholders,
    built_in: t.builtIn,
    created_at: t.createdAt.toISOString(),
    updated_at: t.updatedAt.toISOString(),
  };
}

/**
 * Every template text must parse (422 at `["body", "translations", <locale>, <field>]`, naming
 * the line and column), keep to the limits and put secret values only where they may stand
 * (same place), the locale keys must be language tags, and the default locale must have a
 * translation.
 */
async function checkTemplate(defaultLocale: string, translations: Record<string, TemplateTranslation>): Promise<void> {
  const problems: ValidationItem[] = [];
  for (const [locale, t] of Object.entries(translations)) {
    if (!Locale.safeParse(locale).success) {
      problems.push({
        loc: ['body', 'translations', locale],
        msg: 'A locale is a BCP 47 language tag such as en, de or de-AT',
        type: 'value_error',
      });
      continue;
    }
    for (const field of ['subject', 'html', 'text'] as const) {
      await nextTurn();
      const problem = partProblem(field, t[field]);
      if (problem) problems.push({ loc: ['body', 'translations', locale, field], msg: problem, type: 'value_error' });
    }
  }
  if (!Object.keys(translations).includes(defaultLocale))
    problems.push({ loc: ['body', 'default_locale'], msg: 'The default locale must have a translation', type: 'value_error' });
  if (problems.length) throw new ValidationFailure(problems);
}

/**
 * One part's check takes up to some tens of milliseconds (64 KiB through Handlebars' parser and
 * the html tokenizer); a body holds up to fifteen such parts. Other requests get their turn
 * between parts, so no request holds the event loop for the sum.
 */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function partProblem(field: 'subject' | 'html' | 'text', source: string): string | undefined {
  try {
    checkTemplatePart(field, source);
    return undefined;
  } catch (err) {
    if (err instanceof TemplateSyntaxError) return `The template does not parse: ${err.message}`;
    if (err instanceof TemplateCheckError) return err.message;
    throw err;
  }
}

const keyTaken = () => errors.conflict('KEY_TAKEN', 'Another template has this key');

/** A template by id (uuid) or by key. */
export async function findTemplate(em: EntityManager, idOrKey: string): Promise<EmailTemplate> {
  const byId = z.uuid().safeParse(idOrKey).success;
  const t = await em.findOne(EmailTemplate, byId ? { id: idOrKey } : { key: idOrKey });
  if (!t) throw errors.notFound('Email template');
  return t;
}

export async function createTemplate(
  em: EntityManager,
  actor: StaffCaller,
  input: z.output<typeof NewTemplateSchema>,
): Promise<EmailTemplateView> {
  await checkTemplate(input.default_locale, input.translations);
  const t = em.create(EmailTemplate, {
    key: input.key,
    name: input.name,
    defaultLocale: input.default_locale,
    translations: input.translations,
  });
  const view = emailTemplateView(t);
  recordAudit(em, actor, { action: 'email_template.created', entityType: 'email_template', entityId: t.id, after: view });
  await flushUnique(em, keyTaken);
  return view;
}

export async function updateTemplate(
  em: EntityManager,
  actor: StaffCaller,
  idOrKey: string,
  patch: z.output<typeof TemplatePatchSchema>,
): Promise<EmailTemplateView> {
  const t = await findTemplate(em, idOrKey);
  const before = emailTemplateView(t);
  if (patch.key !== undefined && patch.key !== t.key && t.builtIn)
    throw new AppError(409, 'TEMPLATE_BUILT_IN', 'The service sends this template by its key: the key cannot change');
  const defaultLocale = patch.default_locale ?? t.defaultLocale;
  const translations = patch.translations ?? t.translations;
  await checkTemplate(defaultLocale, translations);
  if (patch.key !== undefined) t.key = patch.key;
  if (patch.name !== undefined) t.name = patch.name;
  t.defaultLocale = defaultLocale;
  t.translations = translations;
  t.updatedAt = new Date();
  const after = emailTemplateView(t);
  recordAudit(em, actor, { action: 'email_template.updated', entityType: 'email_template', entityId: t.id, before, after });
  await flushUnique(em, keyTaken);
  return after;
}

export async function deleteTemplate(em: EntityManager, actor: StaffCaller, idOrKey: string): Promise<void> {
  const t = await findTemplate(em, idOrKey);
  if (t.builtIn) throw new AppError(409, 'TEMPLATE_BUILT_IN', 'The service sends this template itself: edit it instead');
  recordAudit(em, actor, {
    action: 'email_template.deleted',
    entityType: 'email_template',
    entityId: t.id,
    before: emailTemplateView(t),
  });
  em.remove(t);
  await em.flush();
}

/** A preview's rendering (values read, escaped and joined), once its parts are checked: a few milliseconds at the limits. */
export const PREVIEW_BUDGET_MS = 50;

/**
 * Endpoint 16: the translation for `locale`, its language, or the default; every placeholder
 * filled from `sample_data` (HTML-escaped in `html`). Placeholders it does not resolve to text,
 * a number or a boolean are 422, one entry each at `["body", "sample_data", <placeholder>]`.
 * The stored texts are checked again (a template saved before a rule existed is refused here
 * as it would be on save, at `["path", "template_id", "translations", <locale>, <field>]`), the
 * answer is at most RENDERED_MAIL_MAX_CHARS characters and 256 KiB, and the work stops at
 * PREVIEW_BUDGET_MS (422 otherwise).
 */
export async function previewTemplate(
  t: EmailTemplate,
  input: { locale: string; sample_data: Record<string, unknown> },
): Promise<z.output<typeof PreviewSchema>> {
  const locale = pickLocale(t, input.locale);
  const tr = t.translations[locale]!;
  const broken: ValidationItem[] = [];
  for (const field of ['subject', 'html', 'text'] as const) {
    await nextTurn();
    const problem = partProblem(field, tr[field]);
    if (problem) broken.push({ loc: ['path', 'template_id', 'translations', locale, field], msg: problem, type: 'value_error' });
  }
  if (broken.length) throw new ValidationFailure(broken);
  const missing = unresolvedPlaceholders([tr.subject, tr.html, tr.text], input.sample_data);
  if (missing.length)
    throw new ValidationFailure(
      missing.map((p) => ({
        loc: ['body', 'sample_data', p],
        msg: `sample_data has no text, number or boolean for the placeholder {{${p}}}`,
        type: 'missing',
      })),
    );
  let rendered: ReturnType<typeof renderTranslation>;
  try {
    // The parts are checked and cached above: what is left is reading values and joining.
    rendered = renderTranslation(tr, input.sample_data, {}, { deadline: performance.now() + PREVIEW_BUDGET_MS });
  } catch (err) {
    if (err instanceof TemplateOutputTooLarge) throw tooLarge(`more than ${RENDERED_MAIL_MAX_CHARS} characters`);
    if (err instanceof TemplateRenderTimeout)
      throw fieldError('path', ['template_id'], `The preview took longer than its budget of ${PREVIEW_BUDGET_MS} ms`);
    throw err;
  }
  const answer = { subject: rendered.subject, html: rendered.html ?? '', text: rendered.text, locale };
  // Characters were capped before rendering; escaping in JSON (quotes, control characters) can still grow them.
  const bytes = Buffer.byteLength(JSON.stringify(answer));
  if (bytes > PREVIEW_MAX_BYTES) throw tooLarge(`${bytes} bytes`);
  return answer;
}

const PREVIEW_MAX_BYTES = 256 * 1024;

const tooLarge = (size: string) =>
  fieldError('body', ['sample_data'], `The preview would be ${size}; an answer is at most ${PREVIEW_MAX_BYTES} bytes`);
