import type { DocumentType } from '../../entities/customer-document.entity';
import type { FailureRule } from '../../entities/prop-challenge.entity';

/**
 * The languages a customer is written to in (notifications, mails, statements), picked from
 * the customer's locale as mail templates pick theirs, and the words for the coded values
 * those texts name. Here, below every area that writes to customers.
 */

/** The languages notification texts are written in; any other locale reads English. */
export const NOTIFICATION_LANGUAGES = ['en', 'de'] as const;
export type Language = (typeof NOTIFICATION_LANGUAGES)[number];

/**
 * The words for the coded values a customer may be told about, in each language: a mail or
 * notification names a document type or a challenge rule in the customer's words, never by the
 * API's key (`payment_method`, `daily_loss`). Typed by the codes, so a new code needs its words.
 */
interface Terms {
  document: Record<DocumentType, string>;
  rule: Record<FailureRule, string>;
  balance: string;
  equity: string;
}

export const TERMS: Record<Language, Terms> = {
  en: {
    document: {
      identity: 'ID document',
      address: 'proof of residence',
      selfie: 'photo of yourself',
      payment_method: 'proof of payment method',
    },
    rule: { daily_loss: 'daily loss limit', total_loss: 'maximum loss limit', time_limit: 'time limit' },
    balance: 'balance',
    equity: 'equity',
  },
  de: {
    document: {
      identity: 'Ausweisdokument',
      address: 'Wohnsitznachweis',
      selfie: 'Foto von Ihnen',
      payment_method: 'Nachweis der Zahlungsmethode',
    },
    rule: { daily_loss: 'Tagesverlustlimit', total_loss: 'Maximalverlustlimit', time_limit: 'Zeitlimit' },
    balance: 'Saldo',
    equity: 'Equity',
  },
};

/** The language of a locale, as mail templates pick theirs (`de-AT`, then `de`), else English. */
export function notificationLanguage(locale: string | null | undefined): Language {
  const language = (locale ?? '').toLowerCase().split('-')[0];
  return (NOTIFICATION_LANGUAGES as readonly string[]).includes(language ?? '') ? (language as Language) : 'en';
}
