import { type DefaultMailTemplate } from './template-parts';

/** Mails to staff: task reminders. */
export const STAFF_TEMPLATES: readonly DefaultMailTemplate[] = [
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
