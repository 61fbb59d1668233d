import { wrap, type DefaultMailTemplate } from './template-parts';

/**
 * Mails about support conversations. A reply mail links to the conversation in the portal and
 * never carries the message: the customer reads it signed in.
 */
export const SUPPORT_TEMPLATES: readonly DefaultMailTemplate[] = [
  {
    key: 'conversation_reply',
    name: 'Support replied',
    placeholders: ['first_name', 'subject', 'conversation_url'],
    defaultLocale: 'en',
    translations: {
      en: {
        subject: 'Support answered your question',
        text: 'Hello {{first_name}},\n\nour support team answered in your conversation "{{subject}}". Read the answer here:\n\n{{conversation_url}}\n',
        html: wrap([
          'Hello {{first_name}},',
          'our support team answered in your conversation “{{subject}}”.',
          '<a href="{{conversation_url}}">Read the answer</a>',
        ]),
      },
      de: {
        subject: 'Der Support hat Ihre Frage beantwortet',
        text: 'Hallo {{first_name}},\n\nunser Support hat in Ihrer Unterhaltung „{{subject}}“ geantwortet. Hier lesen Sie die Antwort:\n\n{{conversation_url}}\n',
        html: wrap([
          'Hallo {{first_name}},',
          'unser Support hat in Ihrer Unterhaltung „{{subject}}“ geantwortet.',
          '<a href="{{conversation_url}}">Antwort lesen</a>',
        ]),
      },
    },
  },
];
