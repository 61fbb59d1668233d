import type { MailTemplate } from './renderer';

/**
 * The mails the service sends itself, in code until issue 11 moves them into the
 * `email_templates` table (shipped there as defaults by a migration). Secret values (the
 * reset link) are body placeholders passed as `secretData`; a subject never names one.
 */
export const MAIL_TEMPLATES: readonly MailTemplate[] = [
  {
    key: 'password_reset',
    defaultLocale: 'en',
    translations: {
      en: {
        subject: 'Reset your password',
        text:
          'Hello {{first_name}},\n\nSomeone asked to reset the password of your account. To choose a new one, ' +
          'open this link within the hour:\n\n{{reset_url}}\n\nIf it was not you, ignore this mail: your password stays as it is.\n',
        html:
          '<p>Hello {{first_name}},</p><p>Someone asked to reset the password of your account. To choose a new one, ' +
          'open this link within the hour:</p><p><a href="{{reset_url}}">Choose a new password</a></p>' +
          '<p>If it was not you, ignore this mail: your password stays as it is.</p>',
      },
      de: {
        subject: 'Passwort zurücksetzen',
        text:
          'Hallo {{first_name}},\n\njemand möchte das Passwort Ihres Kontos zurücksetzen. Öffnen Sie innerhalb einer ' +
          'Stunde diesen Link, um ein neues zu wählen:\n\n{{reset_url}}\n\nWaren Sie es nicht, ignorieren Sie diese Mail: ' +
          'Ihr Passwort bleibt unverändert.\n',
        html:
          '<p>Hallo {{first_name}},</p><p>jemand möchte das Passwort Ihres Kontos zurücksetzen. Öffnen Sie innerhalb ' +
          'einer Stunde diesen Link, um ein neues zu wählen:</p><p><a href="{{reset_url}}">Neues Passwort wählen</a></p>' +
          '<p>Waren Sie es nicht, ignorieren Sie diese Mail: Ihr Passwort bleibt unverändert.</p>',
      },
    },
  },
];
