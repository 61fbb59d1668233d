import { notificationLanguage } from '../mail/customer-language';

/**
 * The words of a statement its customer reads, in the customer's language (the language of
 * its notifications and mails: `de-AT` reads German, an unknown one English).
 */
const TEXTS = {
  en: { buy: 'Buy', sell: 'Sell', side: 'Type', holder: 'Account holder' },
  de: { buy: 'Kauf', sell: 'Verkauf', side: 'Typ', holder: 'Kontoinhaber' },
} as const;

export type StatementTexts = (typeof TEXTS)[keyof typeof TEXTS];

export function statementTexts(locale: string | null | undefined): StatementTexts {
  return TEXTS[notificationLanguage(locale)];
}
