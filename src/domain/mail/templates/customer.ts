import { wrap, type DefaultMailTemplate } from './template-parts';

/** Mails about the customer itself: its password, sign-up, invitation, verification and documents. */
export const CUSTOMER_TEMPLATES: readonly DefaultMailTemplate[] = [
  {
    key: 'password_reset',
    name: 'Password reset',
    placeholders: ['first_name', 'reset_url (secret)'],
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
  {
    key: 'document_approved',
    name: 'Verification document approved',
    placeholders: ['first_name', 'document_type', 'file_name'],
    defaultLocale: 'en',
    translations: {
      en: {
        subject: 'Your verification document is approved',
        text: 'Hello {{first_name}},\n\nyour document {{file_name}} ({{document_type}}) is approved.\n',
        html: wrap(['Hello {{first_name}},', 'your document <strong>{{file_name}}</strong> ({{document_type}}) is approved.']),
      },
      de: {
        subject: 'Ihr Verifizierungsdokument wurde akzeptiert',
        text: 'Hallo {{first_name}},\n\nIhr Dokument {{file_name}} ({{document_type}}) wurde akzeptiert.\n',
        html: wrap([
          'Hallo {{first_name}},',
          'Ihr Dokument <strong>{{file_name}}</strong> ({{document_type}}) wurde akzeptiert.',
        ]),
      },
    },
  },
  {
    key: 'document_rejected',
    name: 'Verification document rejected',
    placeholders: ['first_name', 'document_type', 'file_name', 'reason'],
    defaultLocale: 'en',
    translations: {
      en: {
        subject: 'Your verification document was rejected',
        text: 'Hello {{first_name}},\n\nyour document {{file_name}} ({{document_type}}) was rejected: {{reason}}\nPlease submit a new one.\n',
        html: wrap([
          'Hello {{first_name}},',
          'your document <strong>{{file_name}}</strong> ({{document_type}}) was rejected: {{reason}}',
          'Please submit a new one.',
        ]),
      },
      de: {
        subject: 'Ihr Verifizierungsdokument wurde abgelehnt',
        text: 'Hallo {{first_name}},\n\nIhr Dokument {{file_name}} ({{document_type}}) wurde abgelehnt: {{reason}}\nBitte reichen Sie ein neues ein.\n',
        html: wrap([
          'Hallo {{first_name}},',
          'Ihr Dokument <strong>{{file_name}}</strong> ({{document_type}}) wurde abgelehnt: {{reason}}',
          'Bitte reichen Sie ein neues ein.',
        ]),
      },
    },
  },
  {
    key: 'customer_verified',
    name: 'Verification level reached',
    placeholders: ['first_name', 'verification_level'],
    defaultLocale: 'en',
    translations: {
      en: {
        subject: 'Your account is verified to level {{verification_level}}',
        text: 'Hello {{first_name}},\n\nyour account is now verified to level {{verification_level}}.\n',
        html: wrap(['Hello {{first_name}},', 'your account is now verified to level <strong>{{verification_level}}</strong>.']),
      },
      de: {
        subject: 'Ihr Konto ist auf Stufe {{verification_level}} verifiziert',
        text: 'Hallo {{first_name}},\n\nIhr Konto ist jetzt auf Stufe {{verification_level}} verifiziert.\n',
        html: wrap([
          'Hallo {{first_name}},',
          'Ihr Konto ist jetzt auf Stufe <strong>{{verification_level}}</strong> verifiziert.',
        ]),
      },
    },
  },
  {
    key: 'registration_confirm',
    name: 'Confirm your registration',
    placeholders: ['first_name', 'valid_hours', 'confirm_url (secret)'],
    defaultLocale: 'en',
    translations: {
      en: {
        subject: 'Confirm your registration',
        text:
          'Hello {{first_name}},\n\nthank you for signing up. To open your account, open this link within {{valid_hours}} hours:\n\n' +
          '{{confirm_url}}\n\nIf it was not you, ignore this mail: no account is opened.\n',
        html:
          '<p>Hello {{first_name}},</p><p>thank you for signing up. To open your account, open this link within ' +
          '{{valid_hours}} hours:</p><p><a href="{{confirm_url}}">Confirm my registration</a></p>' +
          '<p>If it was not you, ignore this mail: no account is opened.</p>',
      },
      de: {
        subject: 'Bestätigen Sie Ihre Registrierung',
        text:
          'Hallo {{first_name}},\n\ndanke für Ihre Anmeldung. Öffnen Sie innerhalb von {{valid_hours}} Stunden diesen Link, ' +
          'um Ihr Konto zu eröffnen:\n\n{{confirm_url}}\n\nWaren Sie es nicht, ignorieren Sie diese Mail: es wird kein Konto eröffnet.\n',
        html:
          '<p>Hallo {{first_name}},</p><p>danke für Ihre Anmeldung. Öffnen Sie innerhalb von {{valid_hours}} Stunden ' +
          'diesen Link, um Ihr Konto zu eröffnen:</p><p><a href="{{confirm_url}}">Registrierung bestätigen</a></p>' +
          '<p>Waren Sie es nicht, ignorieren Sie diese Mail: es wird kein Konto eröffnet.</p>',
      },
    },
  },
  {
    key: 'registration_attempt',
    name: 'Someone tried to register with your email',
    placeholders: ['first_name'],
    defaultLocale: 'en',
    translations: {
      en: {
        subject: 'Someone tried to register with your email',
        text:
          'Hello {{first_name}},\n\nsomeone tried to open a new account with your email. You already have an ' +
          'account: log in as usual, or reset your password if you forgot it. If it was not you, no action is needed.\n',
        html: wrap([
          'Hello {{first_name}},',
          'someone tried to open a new account with your email. You already have an account: log in as usual, or reset your password if you forgot it.',
          'If it was not you, no action is needed.',
        ]),
      },
      de: {
        subject: 'Jemand wollte sich mit Ihrer E-Mail-Adresse registrieren',
        text:
          'Hallo {{first_name}},\n\njemand wollte mit Ihrer E-Mail-Adresse ein neues Konto eröffnen. Sie haben bereits ' +
          'ein Konto: melden Sie sich wie gewohnt an oder setzen Sie Ihr Passwort zurück. Waren Sie es nicht, ist nichts zu tun.\n',
        html: wrap([
          'Hallo {{first_name}},',
          'jemand wollte mit Ihrer E-Mail-Adresse ein neues Konto eröffnen. Sie haben bereits ein Konto: melden Sie sich wie gewohnt an oder setzen Sie Ihr Passwort zurück.',
          'Waren Sie es nicht, ist nichts zu tun.',
        ]),
      },
    },
  },
  {
    key: 'lead_invite',
    name: 'Invitation to choose a password',
    placeholders: ['first_name', 'valid_minutes', 'reset_url (secret)'],
    defaultLocale: 'en',
    translations: {
      en: {
        subject: 'Your account is ready: choose a password',
        text:
          'Hello {{first_name}},\n\nan account is ready for you. To choose your password, open this link within ' +
          '{{valid_minutes}} minutes:\n\n{{reset_url}}\n',
        html:
          '<p>Hello {{first_name}},</p><p>an account is ready for you. To choose your password, open this link within ' +
          '{{valid_minutes}} minutes:</p><p><a href="{{reset_url}}">Choose my password</a></p>',
      },
      de: {
        subject: 'Ihr Konto ist bereit: wählen Sie ein Passwort',
        text:
          'Hallo {{first_name}},\n\nein Konto ist für Sie bereit. Öffnen Sie innerhalb von {{valid_minutes}} Minuten ' +
          'diesen Link, um Ihr Passwort zu wählen:\n\n{{reset_url}}\n',
        html:
          '<p>Hallo {{first_name}},</p><p>ein Konto ist für Sie bereit. Öffnen Sie innerhalb von {{valid_minutes}} ' +
          'Minuten diesen Link, um Ihr Passwort zu wählen:</p><p><a href="{{reset_url}}">Passwort wählen</a></p>',
      },
    },
  },
];
