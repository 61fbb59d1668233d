import { CUSTOMER_TEMPLATES } from './templates/customer';
import { MONEY_TEMPLATES } from './templates/money';
import { PROP_TEMPLATES } from './templates/prop';
import { STAFF_TEMPLATES } from './templates/staff';
import { SUPPORT_TEMPLATES } from './templates/support';
import type { DefaultMailTemplate } from './templates/template-parts';

export type { DefaultMailTemplate } from './templates/template-parts';

/**
 * The mails the service sends itself. A migration writes them into `email_templates` as
 * built-in templates (operators may edit their texts, not delete them); these definitions are
 * the reference for that migration and for tests. Secret values (the reset link) are body
 * placeholders passed as `secretData`; a subject never names one.
 */
export const MAIL_TEMPLATES: readonly DefaultMailTemplate[] = [
  ...CUSTOMER_TEMPLATES,
  ...MONEY_TEMPLATES,
  ...PROP_TEMPLATES,
  ...STAFF_TEMPLATES,
  ...SUPPORT_TEMPLATES,
];
