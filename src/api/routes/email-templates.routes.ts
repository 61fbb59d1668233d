import { z } from 'zod';
import {
  createTemplate,
  deleteTemplate,
  EmailTemplateSchema,
  emailTemplateView,
  findTemplate,
  Locale,
  NewTemplateSchema,
  previewTemplate,
  PreviewSchema,
  TemplatePatchSchema,
  updateTemplate,
} from '../../domain/mail/email-templates';
import { EmailTemplate } from '../../entities/email-template.entity';
import { asStaff } from '../http/access';
import { findPage } from '../../db/find-page';
import { pageQuery, pageSchema } from '../http/paging';
import { defineRoute, json, type RouteSpec } from '../http/route';

const TemplateIdParam = z.object({
  template_id: z.string().min(1).max(64).describe('The template id (uuid) or its key'),
});

const PLACEHOLDERS =
  'Placeholders are `{{name}}` and `{{path.to.value}}` (Handlebars in strict mode, placeholders only: blocks, ' +
  'helpers, partials and `{{{raw}}}` are refused). Values are HTML-escaped in `html` and kept as they are in ' +
  '`subject` and `text`. A text that does not parse is 422 at `["body", "translations", <locale>, <field>]`, ' +
  'naming the line and column; `default_locale` must have a translation (422 at `default_locale`). Each text is at ' +
  'most 64 KiB with at most 200 placeholders. Values that carry a secret (`reset_url`, `reset_token`) may stand ' +
  'only as the whole `href` of an `<a>` in `html` (a link; the `<a>` may not have `ping`, and the part may not use ' +
  'style, link or script elements, other raw-text elements, or SVG/MathML) and as a whole word in `text`; never in ' +
  '`subject`: 422 at that field otherwise.';

const ACCESS = { kind: 'staff', permission: 'manage_email_templates' } as const;

export const emailTemplateRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/email-templates',
    operationId: 'createEmailTemplate',
    summary: 'Create a mail template',
    description: `Keys are unique (409 \`KEY_TAKEN\`). ${PLACEHOLDERS} Audited.`,
    tags: ['email templates'],
    access: ACCESS,
    body: NewTemplateSchema,
    responses: {
      201: { description: 'Created', schema: EmailTemplateSchema },
      409: { description: 'The key is taken (KEY_TAKEN)' },
    },
    handler: async ({ body, em, caller }) => json(201, await createTemplate(em, asStaff(caller), body)),
  }),
  defineRoute({
    method: 'get',
    path: '/email-templates',
    operationId: 'listEmailTemplates',
    summary: 'Mail templates, by key',
    description:
      'Includes the built-in templates of the mails the service sends itself (`password_reset`, ' +
      '`withdrawal_requested`, `withdrawal_approved`, `withdrawal_rejected`, `payout_approved`, `payout_rejected`, ' +
      '`margin_call`, `document_approved`, `document_rejected`, `customer_verified`), which operators may edit.',
    tags: ['email templates'],
    access: ACCESS,
    query: z.object(pageQuery()),
    responses: { 200: { description: 'A page of templates', schema: pageSchema(EmailTemplateSchema) } },
    handler: async ({ query, em }) =>
      json(200, await findPage(em, EmailTemplate, {}, query, { orderBy: { key: 'asc' } }, emailTemplateView)),
  }),
  defineRoute({
    method: 'get',
    path: '/email-templates/{template_id}',
    operationId: 'getEmailTemplate',
    summary: 'One mail template',
    tags: ['email templates'],
    access: ACCESS,
    params: TemplateIdParam,
    responses: {
      200: { description: 'The template', schema: EmailTemplateSchema },
      404: { description: 'No such template' },
    },
    handler: async ({ params, em }) => json(200, emailTemplateView(await findTemplate(em, params.template_id))),
  }),
  defineRoute({
    method: 'patch',
    path: '/email-templates/{template_id}',
    operationId: 'updateEmailTemplate',
    summary: 'Change a mail template',
    description:
      'Any of `key`, `name`, `default_locale`, `translations` (replaced as a whole). A built-in template keeps its ' +
      `key (409 \`TEMPLATE_BUILT_IN\`). Mails not yet sent use the new texts: they are rendered when sent. ${PLACEHOLDERS} Audited.`,
    tags: ['email templates'],
    access: ACCESS,
    params: TemplateIdParam,
    body: TemplatePatchSchema,
    responses: {
      200: { description: 'Changed', schema: EmailTemplateSchema },
      404: { description: 'No such template' },
      409: { description: 'The key is taken (KEY_TAKEN), or the template is built in (TEMPLATE_BUILT_IN)' },
    },
    handler: async ({ params, body, em, caller }) =>
      json(200, await updateTemplate(em, asStaff(caller), params.template_id, body)),
  }),
  defineRoute({
    method: 'delete',
    path: '/email-templates/{template_id}',
    operationId: 'deleteEmailTemplate',
    summary: 'Delete a mail template',
    description: 'Built-in templates cannot be deleted (409 `TEMPLATE_BUILT_IN`). Audited.',
    tags: ['email templates'],
    access: ACCESS,
    params: TemplateIdParam,
    responses: {
      204: { description: 'Deleted' },
      404: { description: 'No such template' },
      409: { description: 'Built in (TEMPLATE_BUILT_IN)' },
    },
    handler: async ({ params, em, caller }) => {
      await deleteTemplate(em, asStaff(caller), params.template_id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/email-templates/{template_id}/preview',
    operationId: 'previewEmailTemplate',
    summary: 'Render a template with sample data',
    description:
      "Picks the translation for `locale`, then its language (`de-AT`, then `de`), then the template's " +
      '`default_locale`, and fills every placeholder from `sample_data` (HTML-escaped in `html`). `locale` in the ' +
      'answer is the translation used. A placeholder that `sample_data` does not resolve to text, a number or a ' +
      'boolean is 422, one entry each at `["body", "sample_data", "<placeholder>"]`. The stored texts are checked ' +
      'against the rules of a save (422 at `["path", "template_id", "translations", <locale>, <field>]`); an answer ' +
      'larger than 256 KiB is 422 at `["body", "sample_data"]`, and one that takes longer than its time budget is 422 ' +
      'at `["path", "template_id"]`. Nothing is sent or stored.',
    tags: ['email templates'],
    access: ACCESS,
    params: TemplateIdParam,
    body: z.object({
      locale: Locale,
      sample_data: z
        .record(z.string(), z.unknown())
        .default({})
        .describe('Values for the placeholders; nested objects for dotted paths'),
    }),
    responses: {
      200: { description: 'The rendered mail', schema: PreviewSchema },
      404: { description: 'No such template' },
    },
    handler: async ({ params, body, em }) => json(200, await previewTemplate(await findTemplate(em, params.template_id), body)),
  }),
];
