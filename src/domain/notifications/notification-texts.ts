import type { z } from 'zod';
import { DocumentSchema } from '../compliance/documents';
import { WithdrawalSchema } from '../money/withdrawals';
import { PayoutSchema } from '../prop/payouts';
import { BonusSchema } from '../bonuses/bonuses';
import { notificationLanguage, TERMS, type Language } from '../mail/customer-language';

/**
 * What a customer is told of each event: the title and body in each language, the fields of
 * the event's data they see, and the built-in mail sent beside it. The notifications module
 * decides who is told and writes the rows.
 */

/** Order closes a customer did not ask for: the desk's bulk close, the risk engine's stop-out. */
export const NOTIFIED_CLOSE_REASONS = new Set(['bulk_close', 'stop_out']);

export type Data = Record<string, unknown>;
export const text = (v: unknown) => (v === null || v === undefined ? '' : String(v));
export const money = (d: Data) => `${text(d.amount)} ${text(d.currency)}`.trim();

export { NOTIFICATION_LANGUAGES, notificationLanguage, TERMS, type Language } from '../mail/customer-language';

/** The words of a code in a language; a code without words (none, as the types require) reads as given. */
export const term = <G extends 'document' | 'rule'>(language: Language, group: G, code: unknown): string =>
  (TERMS[language][group] as Record<string, string>)[text(code)] ?? text(code);

interface Words {
  title: string;
  body: (d: Data) => string;
}

export interface Telling {
  /** The title and body in each language (English is the fallback). */
  words: Record<Language, Words>;
  /**
   * What of the event's data the customer sees (the notification's `data`): a projection the
   * type declares, never the event's data wholesale. Events carry staff-level data for
   * webhooks (a risk rule's class and name, a staff user id, a group): only what is listed
   * here reaches the customer.
   */
  shows: (d: Data) => Data;
  /** The built-in mail template sent beside the notification, and its values in the customer's language. */
  mail?: { template: string; data: (d: Data, language: Language, links?: MailLinks) => Data };
}

/** The portal pages a mail may link to, from the service's configuration. */
export interface MailLinks {
  supportConversationUrl: string;
}
export const NO_LINKS: MailLinks = { supportConversationUrl: 'https://portal.broker.invalid/conversations' };

/** The listed fields of the event's data, those it has. */
export const fields =
  (...keys: string[]) =>
  (d: Data): Data =>
    Object.fromEntries(keys.filter((k) => k in d).map((k) => [k, d[k]]));

/** The fields of a view the customer already reads on its own routes (the view's schema), less `hidden`. */
export const viewFields = (view: z.ZodObject, hidden: string[] = []) =>
  Object.keys(view.shape).filter((k) => !hidden.includes(k));

// Not `decided_by`: which staff user decided is the desk's business.
export const payoutShown = fields(...viewFields(PayoutSchema, ['decided_by']));
export const withdrawalShown = fields(...viewFields(WithdrawalSchema));
export const bonusShown = fields(...viewFields(BonusSchema), 'credit_removed');
// The account's figures, not its group or customer id.
export const accountShown = ['login', 'currency', 'balance', 'equity', 'margin', 'free_margin', 'margin_level'];

// The customer's own view of a document: not who decided it.
export const documentShown = fields(...viewFields(DocumentSchema));
export const documentMail = (d: Data, language: Language): Data => ({
  document_type: term(language, 'document', d.type),
  file_name: text(d.file_name),
});

export const moneyMail = (d: Data): Data => ({
  amount: text(d.amount),
  currency: text(d.currency),
  login: text(d.login ?? d.account_login),
});

export function wordsFor(telling: Telling, locale: string, data: Data): { title: string; body: string } {
  const words = telling.words[notificationLanguage(locale)];
  return { title: words.title, body: words.body(data) };
}
