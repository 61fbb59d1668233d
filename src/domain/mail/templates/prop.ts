import { wrap, type DefaultMailTemplate } from './template-parts';

/** Mails about a prop challenge's stages. */
export const PROP_TEMPLATES: readonly DefaultMailTemplate[] = [
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
];
