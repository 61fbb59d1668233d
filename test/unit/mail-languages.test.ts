import { DOCUMENT_TYPES } from '../../src/entities/customer-document.entity';
import { FAILURE_RULES } from '../../src/entities/prop-challenge.entity';
import { accountsLine } from '../../src/domain/eod/daily-statements';
import { renderMail } from '../../src/domain/mail/renderer';
import { MAIL_TEMPLATES } from '../../src/domain/mail/templates';
import { NOTIFICATION_LANGUAGES, TERMS, type Data, type Language } from '../../src/domain/notifications/notification-texts';
import { TELLINGS } from '../../src/domain/notifications/tellings';

/**
 * Every mail and notification a customer gets is in the customer's language throughout: the
 * coded values it names (a document type, a challenge rule) are words of that language, never
 * the API's key. Each built-in template is rendered in every locale with every code it can
 * carry, and each notification text in every language.
 */

const CODES: string[] = [...DOCUMENT_TYPES, ...FAILURE_RULES];
/** A code as a word of its own (`address` inside `addressed` is not one). */
const rawCode = (text: string) => CODES.find((code) => new RegExp(`(?<![\\w-])${code}(?![\\w-])`).test(text));
/** An API-style key: lower case words joined by underscores. */
const SNAKE = /(?<![\w./-])[a-z]+(?:_[a-z]+)+(?![\w-])/;

/** Event data as the outbox carries it, one variant per code a text can name. */
function sampleEvents(): Data[] {
  const base: Data = {
    amount: '250.00',
    currency: 'USD',
    login: 5001234,
    account_login: 5001234,
    reason: 'The photo is blurred',
    symbol: 'EURUSD',
    order: 100234,
    close_reason: 'stop_out',
    close_price: '1.10120',
    profit: '-12.40',
    from_login: 5001234,
    to_login: 5001235,
    from_currency: 'USD',
    to_currency: 'EUR',
    converted_amount: '230.00',
    margin_level: '45.20',
    file_name: 'passport.pdf',
    verification_level: 2,
    previous_level: 1,
    phase: 1,
    next_login: 5001240,
    balance_before: '-20.00',
  };
  return [
    ...DOCUMENT_TYPES.map((type) => ({ ...base, type })),
    ...FAILURE_RULES.map((rule) => ({
      ...base,
      failure: { rule, threshold: '9500.00', equity: '9480.00', balance: '9900.00', at: '2026-03-12T14:05:03.118Z' },
    })),
  ];
}

const LOCALES = [...NOTIFICATION_LANGUAGES, 'de-AT', 'fr'];
const languageOf = (locale: string): Language => (locale.startsWith('de') ? 'de' : 'en');

/** Every mail each template is sent as: its values for each sample, in the language of the locale. */
function mailData(key: string, locale: string): Data[] {
  const language = languageOf(locale);
  const tellings = Object.values(TELLINGS).filter((t) => t.mail?.template === key);
  if (tellings.length)
    return tellings.flatMap((t) => sampleEvents().map((e) => ({ first_name: 'Anna', ...t.mail!.data(e, language) })));
  if (key === 'daily_statement')
    return [
      {
        first_name: 'Anna',
        trading_date: '2026-03-12',
        accounts: accountsLine(
          [
            { login: '5001234', balance: '1000.00', equity: '1012.50', currency: 'USD' },
            { login: '5001235', balance: '0.00', equity: '0.00', currency: 'EUR' },
          ],
          locale,
        ),
      },
    ];
  if (key === 'registration_confirm') return [{ first_name: 'Anna', valid_hours: 24 }];
  if (key === 'lead_invite') return [{ first_name: 'Anna', valid_minutes: 60 }];
  if (key === 'task_reminder')
    return ['overdue', 'reminder'].map((event) => ({
      full_name: 'Anna Agent',
      title: 'Welcome call',
      kind: 'follow up',
      priority: 'urgent',
      due_at: '2026-03-12T14:05:03.118Z',
      event,
    }));
  return [{ first_name: 'Anna' }];
}

describe('mails in one language', () => {
  const cases = MAIL_TEMPLATES.flatMap((t) => LOCALES.map((locale) => [t.key, locale] as const));

  test.each(cases)('when %s is rendered in %s, then it names no code and leaves no placeholder', (key, locale) => {
    const template = MAIL_TEMPLATES.find((t) => t.key === key)!;
    const samples = mailData(key, locale);
    expect(samples.length).toBeGreaterThan(0);
    for (const data of samples) {
      const mail = renderMail(template, {
        locale,
        data,
        secrets: { reset_url: 'https://portal.example/reset?token=abc', confirm_url: 'https://portal.example/confirm?token=abc' },
      });
      for (const part of [mail.subject, mail.text, mail.html ?? '']) {
        expect(part).not.toContain('{{');
        expect(rawCode(part)).toBeUndefined();
        expect(part.match(SNAKE)?.[0]).toBeUndefined();
      }
      if (languageOf(locale) === 'de') expect(mail.locale).toBe('de');
    }
  });

  test('when a German customer is told of a document, then the mail names its type in German', () => {
    const template = MAIL_TEMPLATES.find((t) => t.key === 'document_approved')!;
    for (const type of DOCUMENT_TYPES) {
      const data = { first_name: 'Anna', ...TELLINGS['document.approved']!.mail!.data({ type, file_name: 'a.pdf' }, 'de') };
      const mail = renderMail(template, { locale: 'de-AT', data, secrets: {} });
      expect(mail.text).toContain(`(${TERMS.de.document[type]})`);
      expect(TERMS.de.document[type]).not.toBe(TERMS.en.document[type]);
    }
  });

  test('when the daily statement lists accounts, then its words are the customer language', () => {
    const accounts = [{ login: '5001234', balance: '1000.00', equity: '1012.50', currency: 'USD' }];
    expect(accountsLine(accounts, 'de')).toBe('5001234: Saldo 1000.00 USD, Equity 1012.50 USD');
    expect(accountsLine(accounts, 'en-GB')).toBe('5001234: balance 1000.00 USD, equity 1012.50 USD');
  });
});

describe('notifications in one language', () => {
  const cases = Object.entries(TELLINGS).flatMap(([type, telling]) =>
    NOTIFICATION_LANGUAGES.map((language) => [type, language, telling!] as const),
  );

  test.each(cases)('when %s is told in %s, then its title and body name no code', (_type, language, telling) => {
    for (const event of sampleEvents()) {
      const words = telling.words[language];
      for (const part of [words.title, words.body(event)]) {
        expect(rawCode(part)).toBeUndefined();
        expect(part.match(SNAKE)?.[0]).toBeUndefined();
      }
    }
  });
});
