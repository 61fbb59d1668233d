import type { EntityManager } from '@mikro-orm/postgresql';
import { CodeTemplateRenderer, MailTemplateError, type MailTemplate } from '../../src/domain/mail/renderer';
import { renderTemplate } from '../../src/domain/mail/template-engine';
import { MAIL_TEMPLATES } from '../../src/domain/mail/templates';

const em = undefined as unknown as EntityManager; // code templates never read the database

const greeting: MailTemplate = {
  key: 'greeting',
  defaultLocale: 'en',
  translations: {
    en: {
      subject: 'Hi {{customer.first_name}}',
      text: 'Your code: {{code}}',
      html: '<p>{{customer.first_name}} <a href="{{reset_url}}">{{n}}</a></p>',
    },
    de: { subject: 'Hallo {{customer.first_name}}', text: 'Ihr Code: {{ code }}' },
  },
};
const renderer = new CodeTemplateRenderer([greeting]);

describe('mail templates rendered in code', () => {
  test('when placeholders name paths, then values fill them, HTML-escaped in html only', async () => {
    const mail = await renderer.render(em, {
      template: 'greeting',
      locale: 'en',
      data: { customer: { first_name: 'Jo <b>' }, n: '2 < 3' },
      secrets: { code: 'a&b', reset_url: 'https://x.test/?a=1&b=2' },
    });
    expect(mail).toEqual({
      subject: 'Hi Jo <b>',
      text: 'Your code: a&b',
      html: '<p>Jo &lt;b&gt; <a href="https://x.test/?a=1&amp;b=2">2 &lt; 3</a></p>',
      locale: 'en',
    });
  });

  test('when a locale is asked for, then it, its language, or the default is used', async () => {
    const input = {
      template: 'greeting',
      data: { customer: { first_name: 'Jo' }, n: 1 },
      secrets: { code: '1', reset_url: 'https://x.test/r' },
    };
    expect(await renderer.render(em, { ...input, locale: 'de-AT' })).toMatchObject({
      locale: 'de',
      subject: 'Hallo Jo',
      html: null,
    });
    expect(await renderer.render(em, { ...input, locale: 'DE' })).toMatchObject({ locale: 'de' });
    expect(await renderer.render(em, { ...input, locale: 'fr-CA' })).toMatchObject({ locale: 'en', subject: 'Hi Jo' });
  });

  test('when a subject names a secret, then rendering fails: secrets reach the body only', async () => {
    const leaky = new CodeTemplateRenderer([
      { key: 'leaky', defaultLocale: 'en', translations: { en: { subject: 'Code {{code}}', text: '{{code}}' } } },
    ]);
    await expect(leaky.render(em, { template: 'leaky', locale: 'en', data: {}, secrets: { code: '1' } })).rejects.toThrow(
      new MailTemplateError('the template breaks a rule: {{code}} carries a secret: it may not appear in the subject'),
    );
  });

  test('when a value is missing, not a scalar, or the template unknown, then rendering fails naming it', async () => {
    expect(() => renderTemplate('text', '{{a.b}}', { a: {} })).toThrow('no value for the placeholder {{a.b}}');
    expect(() => renderTemplate('text', '{{a}}', { a: { b: 1 } })).toThrow(MailTemplateError);
    expect(() => renderTemplate('text', '{{toString}}', {})).toThrow(MailTemplateError);
    expect(renderTemplate('text', '{{n}} {{ok}} {not} {{! a note }}', { n: 0, ok: false })).toBe('0 false {not} ');
    expect(() => renderTemplate('text', '{{#if a}}x{{/if}}', { a: true })).toThrow(/only placeholders/);
    expect(() => renderTemplate('html', '{{{raw}}}', { raw: '<b>' })).toThrow(/escaped/);
    expect(() => renderTemplate('text', 'Hi {{name', { name: 'x' })).toThrow(/does not parse.*line 1, column 4/);
    await expect(renderer.render(em, { template: 'nope', locale: 'en', data: {}, secrets: {} })).rejects.toThrow(
      'no mail template "nope"',
    );
  });

  test('when the worker renders a template past the limits, then the mail fails, as a save or a preview would', async () => {
    const over = new CodeTemplateRenderer([
      { key: 'many', defaultLocale: 'en', translations: { en: { subject: 's', text: '{{a}} '.repeat(201) } } },
      { key: 'huge', defaultLocale: 'en', translations: { en: { subject: 's', text: '{{a}} '.repeat(200) } } },
      { key: 'leak', defaultLocale: 'en', translations: { en: { subject: 's', text: 'x', html: '<img src="{{reset_url}}">' } } },
    ]);
    const request = { locale: 'en', secrets: { reset_url: 'https://x.test/r' } };
    await expect(over.render(em, { ...request, template: 'many', data: { a: 'x' } })).rejects.toThrow(/at most 200 placeholders/);
    await expect(over.render(em, { ...request, template: 'huge', data: { a: 'x'.repeat(1400) } })).rejects.toThrow(
      /would be 280\d+ characters, more than 26214\d/,
    );
    await expect(over.render(em, { ...request, template: 'leak', data: {} })).rejects.toThrow(MailTemplateError);
  });

  test('when the shipped templates render with their data, then every translation fills every placeholder', async () => {
    const shipped = new CodeTemplateRenderer(MAIL_TEMPLATES);
    for (const t of MAIL_TEMPLATES) {
      for (const locale of Object.keys(t.translations)) {
        const mail = await shipped.render(em, {
          template: t.key,
          locale,
          data: Object.fromEntries(t.placeholders.filter((p) => !p.includes('secret')).map((p) => [p, 'x'])),
          secrets: { reset_url: 'https://x.test/r?t=1', confirm_url: 'https://x.test/c?t=1' },
        });
        expect(mail.locale).toBe(locale);
        expect(`${mail.subject}${mail.text}${mail.html}`).not.toMatch(/\{\{/);
      }
    }
  });
});
