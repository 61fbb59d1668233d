import type { EntityManager } from '@mikro-orm/postgresql';
import { CodeTemplateRenderer, MailTemplateError, fillPlaceholders, type MailTemplate } from '../../src/domain/mail/renderer';
import { MAIL_TEMPLATES } from '../../src/domain/mail/templates';

const em = undefined as unknown as EntityManager; // code templates never read the database

const greeting: MailTemplate = {
  key: 'greeting',
  defaultLocale: 'en',
  translations: {
    en: { subject: 'Hi {{customer.first_name}}', text: 'Your code: {{code}}', html: '<p>{{customer.first_name}} {{code}}</p>' },
    de: { subject: 'Hallo {{customer.first_name}}', text: 'Ihr Code: {{ code }}' },
  },
};
const renderer = new CodeTemplateRenderer([greeting]);

describe('mail templates rendered in code', () => {
  test('when placeholders name paths, then values fill them, HTML-escaped in html only', async () => {
    const mail = await renderer.render(em, {
      template: 'greeting',
      locale: 'en',
      data: { customer: { first_name: 'Jo <b>' } },
      secrets: { code: 'a&b' },
    });
    expect(mail).toEqual({
      subject: 'Hi Jo <b>',
      text: 'Your code: a&b',
      html: '<p>Jo &lt;b&gt; a&amp;b</p>',
      locale: 'en',
    });
  });

  test('when a locale is asked for, then it, its language, or the default is used', async () => {
    const input = { template: 'greeting', data: { customer: { first_name: 'Jo' } }, secrets: { code: '1' } };
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
      new MailTemplateError('no value for the placeholder {{code}}'),
    );
  });

  test('when a value is missing, not a scalar, or the template unknown, then rendering fails naming it', async () => {
    expect(() => fillPlaceholders('{{a.b}}', { a: {} }, false)).toThrow('no value for the placeholder {{a.b}}');
    expect(() => fillPlaceholders('{{a}}', { a: { b: 1 } }, false)).toThrow(MailTemplateError);
    expect(() => fillPlaceholders('{{toString}}', {}, false)).toThrow(MailTemplateError);
    expect(fillPlaceholders('{{n}} {{ok}} {not} {{! a note }}', { n: 0, ok: false }, false)).toBe('0 false {not} ');
    expect(() => fillPlaceholders('{{#if a}}x{{/if}}', { a: true }, false)).toThrow(/only placeholders/);
    expect(() => fillPlaceholders('{{{raw}}}', { raw: '<b>' }, true)).toThrow(/escaped/);
    expect(() => fillPlaceholders('Hi {{name', { name: 'x' }, false)).toThrow(/does not parse.*line 1, column 6/);
    await expect(renderer.render(em, { template: 'nope', locale: 'en', data: {}, secrets: {} })).rejects.toThrow(
      'no mail template "nope"',
    );
  });

  test('when the shipped templates render with their data, then every translation fills every placeholder', async () => {
    const shipped = new CodeTemplateRenderer(MAIL_TEMPLATES);
    for (const t of MAIL_TEMPLATES) {
      for (const locale of Object.keys(t.translations)) {
        const mail = await shipped.render(em, {
          template: t.key,
          locale,
          data: Object.fromEntries(t.placeholders.filter((p) => !p.includes('secret')).map((p) => [p, 'x'])),
          secrets: { reset_url: 'https://x.test/r?t=1' },
        });
        expect(mail.locale).toBe(locale);
        expect(`${mail.subject}${mail.text}${mail.html}`).not.toMatch(/\{\{/);
      }
    }
  });
});
