import { wrap, type DefaultMailTemplate } from './template-parts';

/** Mails about money: withdrawals, payouts, deposits, margin calls and the daily statement. */
export const MONEY_TEMPLATES: readonly DefaultMailTemplate[] = [
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
];
