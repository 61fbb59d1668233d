import type { MailTemplate } from './renderer';

export interface DefaultMailTemplate extends MailTemplate {
  name: string;
  /** The values each mail of this template is queued with (secrets marked): the contract with its sender. */
  placeholders: string[];
}

const wrap = (paragraphs: string[]) => paragraphs.map((p) => `<p>${p}</p>`).join('');

/**
 * The mails the service sends itself. A migration writes them into `email_templates` as
 * built-in templates (operators may edit their texts, not delete them); these definitions are
 * the reference for that migration and for tests. Secret values (the reset link) are body
 * placeholders passed as `secretData`; a subject never names one.
 */
export const MAIL_TEMPLATES: readonly DefaultMailTemplate[] = [
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
    key: 'withdrawal_requested',
    name: 'Withdrawal requested',
    placeholders: ['first_name', 'amount', 'currency', 'login'],
    defaultLocale: 'en',
    translations: {
      en: {
        subject: 'Your withdrawal of {{amount}} {{currency}} is being reviewed',
        text: 'Hello {{first_name}},\n\nwe received your request to withdraw {{amount}} {{currency}} from your wallet {{login}}. We will let you know once it is decided.\n',
        html: wrap([
          'Hello {{first_name}},',
          'we received your request to withdraw <strong>{{amount}} {{currency}}</strong> from your wallet {{login}}. We will let you know once it is decided.',
        ]),
      },
      de: {
        subject: 'Ihre Auszahlung über {{amount}} {{currency}} wird geprüft',
        text: 'Hallo {{first_name}},\n\nwir haben Ihren Auftrag erhalten, {{amount}} {{currency}} aus Ihrer Wallet {{login}} auszuzahlen. Wir melden uns, sobald er entschieden ist.\n',
        html: wrap([
          'Hallo {{first_name}},',
          'wir haben Ihren Auftrag erhalten, <strong>{{amount}} {{currency}}</strong> aus Ihrer Wallet {{login}} auszuzahlen. Wir melden uns, sobald er entschieden ist.',
        ]),
      },
    },
  },
  {
    key: 'withdrawal_approved',
    name: 'Withdrawal approved',
    placeholders: ['first_name', 'amount', 'currency', 'login'],
    defaultLocale: 'en',
    translations: {
      en: {
        subject: 'Your withdrawal of {{amount}} {{currency}} is approved',
        text: 'Hello {{first_name}},\n\nyour withdrawal of {{amount}} {{currency}} from your wallet {{login}} is approved and on its way.\n',
        html: wrap([
          'Hello {{first_name}},',
          'your withdrawal of <strong>{{amount}} {{currency}}</strong> from your wallet {{login}} is approved and on its way.',
        ]),
      },
      de: {
        subject: 'Ihre Auszahlung über {{amount}} {{currency}} ist genehmigt',
        text: 'Hallo {{first_name}},\n\nIhre Auszahlung über {{amount}} {{currency}} aus Ihrer Wallet {{login}} ist genehmigt und unterwegs.\n',
        html: wrap([
          'Hallo {{first_name}},',
          'Ihre Auszahlung über <strong>{{amount}} {{currency}}</strong> aus Ihrer Wallet {{login}} ist genehmigt und unterwegs.',
        ]),
      },
    },
  },
  {
    key: 'withdrawal_rejected',
    name: 'Withdrawal rejected',
    placeholders: ['first_name', 'amount', 'currency', 'login', 'reason'],
    defaultLocale: 'en',
    translations: {
      en: {
        subject: 'Your withdrawal of {{amount}} {{currency}} was rejected',
        text: 'Hello {{first_name}},\n\nyour withdrawal of {{amount}} {{currency}} from your wallet {{login}} was rejected: {{reason}}\nThe amount is available in your wallet again.\n',
        html: wrap([
          'Hello {{first_name}},',
          'your withdrawal of <strong>{{amount}} {{currency}}</strong> from your wallet {{login}} was rejected: {{reason}}',
          'The amount is available in your wallet again.',
        ]),
      },
      de: {
        subject: 'Ihre Auszahlung über {{amount}} {{currency}} wurde abgelehnt',
        text: 'Hallo {{first_name}},\n\nIhre Auszahlung über {{amount}} {{currency}} aus Ihrer Wallet {{login}} wurde abgelehnt: {{reason}}\nDer Betrag steht in Ihrer Wallet wieder zur Verfügung.\n',
        html: wrap([
          'Hallo {{first_name}},',
          'Ihre Auszahlung über <strong>{{amount}} {{currency}}</strong> aus Ihrer Wallet {{login}} wurde abgelehnt: {{reason}}',
          'Der Betrag steht in Ihrer Wallet wieder zur Verfügung.',
        ]),
      },
    },
  },
  {
    key: 'payout_approved',
    name: 'Payout approved',
    placeholders: ['first_name', 'amount', 'currency', 'login'],
    defaultLocale: 'en',
    translations: {
      en: {
        subject: 'Your payout of {{amount}} {{currency}} is approved',
        text: 'Hello {{first_name}},\n\nthe payout of {{amount}} {{currency}} from your account {{login}} is approved.\n',
        html: wrap([
          'Hello {{first_name}},',
          'the payout of <strong>{{amount}} {{currency}}</strong> from your account {{login}} is approved.',
        ]),
      },
      de: {
        subject: 'Ihre Auszahlung über {{amount}} {{currency}} ist genehmigt',
        text: 'Hallo {{first_name}},\n\ndie Auszahlung über {{amount}} {{currency}} aus Ihrem Konto {{login}} ist genehmigt.\n',
        html: wrap([
          'Hallo {{first_name}},',
          'die Auszahlung über <strong>{{amount}} {{currency}}</strong> aus Ihrem Konto {{login}} ist genehmigt.',
        ]),
      },
    },
  },
  {
    key: 'payout_rejected',
    name: 'Payout rejected',
    placeholders: ['first_name', 'amount', 'currency', 'login', 'reason'],
    defaultLocale: 'en',
    translations: {
      en: {
        subject: 'Your payout of {{amount}} {{currency}} was rejected',
        text: 'Hello {{first_name}},\n\nthe payout of {{amount}} {{currency}} from your account {{login}} was rejected: {{reason}}\n',
        html: wrap([
          'Hello {{first_name}},',
          'the payout of <strong>{{amount}} {{currency}}</strong> from your account {{login}} was rejected: {{reason}}',
        ]),
      },
      de: {
        subject: 'Ihre Auszahlung über {{amount}} {{currency}} wurde abgelehnt',
        text: 'Hallo {{first_name}},\n\ndie Auszahlung über {{amount}} {{currency}} aus Ihrem Konto {{login}} wurde abgelehnt: {{reason}}\n',
        html: wrap([
          'Hallo {{first_name}},',
          'die Auszahlung über <strong>{{amount}} {{currency}}</strong> aus Ihrem Konto {{login}} wurde abgelehnt: {{reason}}',
        ]),
      },
    },
  },
  {
    key: 'margin_call',
    name: 'Margin call',
    placeholders: ['first_name', 'login', 'margin_level'],
    defaultLocale: 'en',
    translations: {
      en: {
        subject: 'Margin call on your account {{login}}',
        text: 'Hello {{first_name}},\n\nthe margin level of your account {{login}} fell to {{margin_level}} %. Add funds or close positions, or they may be closed at the stop-out level.\n',
        html: wrap([
          'Hello {{first_name}},',
          'the margin level of your account {{login}} fell to <strong>{{margin_level}} %</strong>. Add funds or close positions, or they may be closed at the stop-out level.',
        ]),
      },
      de: {
        subject: 'Margin Call für Ihr Konto {{login}}',
        text: 'Hallo {{first_name}},\n\ndas Margin-Level Ihres Kontos {{login}} ist auf {{margin_level}} % gefallen. Zahlen Sie ein oder schließen Sie Positionen, sonst können sie beim Stop-out-Level geschlossen werden.\n',
        html: wrap([
          'Hallo {{first_name}},',
          'das Margin-Level Ihres Kontos {{login}} ist auf <strong>{{margin_level}} %</strong> gefallen. Zahlen Sie ein oder schließen Sie Positionen, sonst können sie beim Stop-out-Level geschlossen werden.',
        ]),
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
    key: 'daily_statement',
    name: 'Daily statement',
    placeholders: ['first_name', 'trading_date', 'accounts'],
    defaultLocale: 'en',
    translations: {
      en: {
        subject: 'Your daily statement for {{trading_date}}',
        text: 'Hello {{first_name}},\n\nyour accounts at the end of {{trading_date}}: {{accounts}}\n\nThe full statement of each account is in your client area.\n',
        html: wrap([
          'Hello {{first_name}},',
          'your accounts at the end of <strong>{{trading_date}}</strong>: {{accounts}}',
          'The full statement of each account is in your client area.',
        ]),
      },
      de: {
        subject: 'Ihr Tagesauszug für den {{trading_date}}',
        text: 'Hallo {{first_name}},\n\nIhre Konten zum Ende des {{trading_date}}: {{accounts}}\n\nDen vollständigen Auszug jedes Kontos finden Sie in Ihrem Kundenbereich.\n',
        html: wrap([
          'Hallo {{first_name}},',
          'Ihre Konten zum Ende des <strong>{{trading_date}}</strong>: {{accounts}}',
          'Den vollständigen Auszug jedes Kontos finden Sie in Ihrem Kundenbereich.',
        ]),
      },
    },
  },
  {
    key: 'deposit_completed',
    name: 'Deposit received',
    placeholders: ['first_name', 'amount', 'currency', 'login'],
    defaultLocale: 'en',
    translations: {
      en: {
        subject: 'Your deposit of {{amount}} {{currency}} has arrived',
        text: 'Hello {{first_name}},\n\nyour deposit of {{amount}} {{currency}} has arrived in your account {{login}}.\n',
        html: wrap([
          'Hello {{first_name}},',
          'your deposit of <strong>{{amount}} {{currency}}</strong> has arrived in your account {{login}}.',
        ]),
      },
      de: {
        subject: 'Ihre Einzahlung über {{amount}} {{currency}} ist eingegangen',
        text: 'Hallo {{first_name}},\n\nIhre Einzahlung über {{amount}} {{currency}} ist auf Ihrem Konto {{login}} eingegangen.\n',
        html: wrap([
          'Hallo {{first_name}},',
          'Ihre Einzahlung über <strong>{{amount}} {{currency}}</strong> ist auf Ihrem Konto {{login}} eingegangen.',
        ]),
      },
    },
  },
  {
    key: 'deposit_failed',
    name: 'Deposit failed',
    placeholders: ['first_name', 'amount', 'currency', 'login', 'reason'],
    defaultLocale: 'en',
    translations: {
      en: {
        subject: 'Your deposit of {{amount}} {{currency}} did not go through',
        text: 'Hello {{first_name}},\n\nyour deposit of {{amount}} {{currency}} into your account {{login}} did not go through: {{reason}}. Nothing was credited.\n',
        html: wrap([
          'Hello {{first_name}},',
          'your deposit of <strong>{{amount}} {{currency}}</strong> into your account {{login}} did not go through: {{reason}}.',
          'Nothing was credited.',
        ]),
      },
      de: {
        subject: 'Ihre Einzahlung über {{amount}} {{currency}} ist fehlgeschlagen',
        text: 'Hallo {{first_name}},\n\nIhre Einzahlung über {{amount}} {{currency}} auf Ihr Konto {{login}} ist fehlgeschlagen: {{reason}}. Es wurde nichts gutgeschrieben.\n',
        html: wrap([
          'Hallo {{first_name}},',
          'Ihre Einzahlung über <strong>{{amount}} {{currency}}</strong> auf Ihr Konto {{login}} ist fehlgeschlagen: {{reason}}.',
          'Es wurde nichts gutgeschrieben.',
        ]),
      },
    },
  },
  {
    key: 'prop_challenge_failed',
    name: 'Prop challenge failed',
    placeholders: ['first_name', 'login', 'phase', 'rule', 'threshold', 'equity'],
    defaultLocale: 'en',
    translations: {
      en: {
        subject: 'Your challenge on account {{login}} has ended',
        text: 'Hello {{first_name}},\n\nphase {{phase}} of your challenge on account {{login}} has failed: rule {{rule}} (threshold {{threshold}}, equity {{equity}}). Its positions are closed and the account no longer trades.\n',
        html: wrap([
          'Hello {{first_name}},',
          'phase {{phase}} of your challenge on account {{login}} has failed: rule <strong>{{rule}}</strong> (threshold {{threshold}}, equity {{equity}}).',
          'Its positions are closed and the account no longer trades.',
        ]),
      },
      de: {
        subject: 'Ihre Challenge auf Konto {{login}} ist beendet',
        text: 'Hallo {{first_name}},\n\nPhase {{phase}} Ihrer Challenge auf Konto {{login}} ist nicht bestanden: Regel {{rule}} (Schwelle {{threshold}}, Equity {{equity}}). Die Positionen sind geschlossen, das Konto handelt nicht mehr.\n',
        html: wrap([
          'Hallo {{first_name}},',
          'Phase {{phase}} Ihrer Challenge auf Konto {{login}} ist nicht bestanden: Regel <strong>{{rule}}</strong> (Schwelle {{threshold}}, Equity {{equity}}).',
          'Die Positionen sind geschlossen, das Konto handelt nicht mehr.',
        ]),
      },
    },
  },
  {
    key: 'prop_challenge_passed',
    name: 'Prop challenge passed',
    placeholders: ['first_name', 'login', 'phase', 'next_login'],
    defaultLocale: 'en',
    translations: {
      en: {
        subject: 'You passed phase {{phase}} on account {{login}}',
        text: 'Hello {{first_name}},\n\ncongratulations: you passed phase {{phase}} of your challenge on account {{login}}. Your next stage trades on account {{next_login}}.\n',
        html: wrap([
          'Hello {{first_name}},',
          'congratulations: you passed phase {{phase}} of your challenge on account {{login}}.',
          'Your next stage trades on account <strong>{{next_login}}</strong>.',
        ]),
      },
      de: {
        subject: 'Phase {{phase}} auf Konto {{login}} bestanden',
        text: 'Hallo {{first_name}},\n\nherzlichen Glückwunsch: Sie haben Phase {{phase}} Ihrer Challenge auf Konto {{login}} bestanden. Ihre nächste Stufe handelt auf Konto {{next_login}}.\n',
        html: wrap([
          'Hallo {{first_name}},',
          'herzlichen Glückwunsch: Sie haben Phase {{phase}} Ihrer Challenge auf Konto {{login}} bestanden.',
          'Ihre nächste Stufe handelt auf Konto <strong>{{next_login}}</strong>.',
        ]),
      },
    },
  },
  {
    key: 'task_reminder',
    name: 'Task reminder',
    placeholders: ['full_name', 'title', 'kind', 'priority', 'due_at', 'event'],
    defaultLocale: 'en',
    translations: {
      en: {
        subject: 'Task {{event}}: {{title}}',
        text: 'Hello {{full_name}},\n\nyour task {{title}} ({{kind}}, {{priority}}) is due at {{due_at}}: {{event}}.\n',
        html: '<p>Hello {{full_name}},</p><p>your task <strong>{{title}}</strong> ({{kind}}, {{priority}}) is due at {{due_at}}: {{event}}.</p>',
      },
      de: {
        subject: 'Aufgabe {{event}}: {{title}}',
        text: 'Hallo {{full_name}},\n\nIhre Aufgabe {{title}} ({{kind}}, {{priority}}) ist fällig am {{due_at}}: {{event}}.\n',
        html: '<p>Hallo {{full_name}},</p><p>Ihre Aufgabe <strong>{{title}}</strong> ({{kind}}, {{priority}}) ist fällig am {{due_at}}: {{event}}.</p>',
      },
    },
  },
];
