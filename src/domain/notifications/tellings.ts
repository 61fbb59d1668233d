import type { EventType } from '../events/event-types';
import { TransferSchema } from '../money/transfers';
import { OrderSchema } from '../orders/order-view';
import { ChallengeSchema } from '../prop/challenges';
import {
  Data,
  NO_LINKS,
  Telling,
  accountShown,
  bonusShown,
  documentMail,
  documentShown,
  fields,
  money,
  moneyMail,
  payoutShown,
  term,
  text,
  viewFields,
  withdrawalShown,
} from './notification-texts';

/**
 * What each notified event says, in the customer's language as the mails are (the locale, then
 * its language: `de-AT` reads German; anything else English). Amounts and prices are shown as
 * the API writes them, in every language.
 */
export const TELLINGS: Partial<Record<EventType, Telling>> = {
  'deposit.completed': {
    words: {
      en: {
        title: 'Deposit received',
        body: (d) => `${money(d)} arrived in your account ${text(d.login)}.`,
      },
      de: {
        title: 'Einzahlung eingegangen',
        body: (d) => `${money(d)} sind auf Ihrem Konto ${text(d.login)} eingegangen.`,
      },
    },
    shows: fields('id', 'login', 'amount', 'currency', 'balance', 'created_at'),
    mail: { template: 'deposit_completed', data: moneyMail },
  },
  'deposit.failed': {
    words: {
      en: {
        title: 'Deposit failed',
        body: (d) =>
          `Your deposit of ${money(d)} did not go through${d.reason ? `: ${text(d.reason)}` : ''}. Nothing was charged to your account.`,
      },
      de: {
        title: 'Einzahlung fehlgeschlagen',
        body: (d) =>
          `Ihre Einzahlung von ${money(d)} ist nicht durchgegangen${d.reason ? `: ${text(d.reason)}` : ''}. Ihrem Konto wurde nichts belastet.`,
      },
    },
    shows: fields('id', 'login', 'amount', 'currency', 'status', 'reason', 'created_at'),
    mail: { template: 'deposit_failed', data: (d) => ({ ...moneyMail(d), reason: text(d.reason) }) },
  },
  'withdrawal.requested': {
    words: {
      en: {
        title: 'Withdrawal requested',
        body: (d) => `Your request to withdraw ${money(d)} from your wallet ${text(d.login)} awaits approval.`,
      },
      de: {
        title: 'Auszahlung beantragt',
        body: (d) => `Ihr Antrag, ${money(d)} aus Ihrer Wallet ${text(d.login)} auszuzahlen, wartet auf Freigabe.`,
      },
    },
    shows: withdrawalShown,
    mail: { template: 'withdrawal_requested', data: moneyMail },
  },
  'withdrawal.approved': {
    words: {
      en: {
        title: 'Withdrawal approved',
        body: (d) => `Your withdrawal of ${money(d)} from your wallet ${text(d.login)} is approved.`,
      },
      de: {
        title: 'Auszahlung genehmigt',
        body: (d) => `Ihre Auszahlung von ${money(d)} aus Ihrer Wallet ${text(d.login)} ist genehmigt.`,
      },
    },
    shows: withdrawalShown,
    mail: { template: 'withdrawal_approved', data: moneyMail },
  },
  'withdrawal.rejected': {
    words: {
      en: {
        title: 'Withdrawal rejected',
        body: (d) => `Your withdrawal of ${money(d)} was rejected: ${text(d.reason)}. The amount is back in your wallet.`,
      },
      de: {
        title: 'Auszahlung abgelehnt',
        body: (d) => `Ihre Auszahlung von ${money(d)} wurde abgelehnt: ${text(d.reason)}. Der Betrag ist wieder in Ihrer Wallet.`,
      },
    },
    shows: withdrawalShown,
    mail: { template: 'withdrawal_rejected', data: (d) => ({ ...moneyMail(d), reason: text(d.reason) }) },
  },
  'payout.approved': {
    words: {
      en: { title: 'Payout approved', body: (d) => `Your payout of ${money(d)} is approved.` },
      de: { title: 'Gewinnauszahlung genehmigt', body: (d) => `Ihre Gewinnauszahlung von ${money(d)} ist genehmigt.` },
    },
    shows: payoutShown,
    mail: { template: 'payout_approved', data: moneyMail },
  },
  'payout.rejected': {
    words: {
      en: { title: 'Payout rejected', body: (d) => `Your payout of ${money(d)} was rejected: ${text(d.reason)}.` },
      de: {
        title: 'Gewinnauszahlung abgelehnt',
        body: (d) => `Ihre Gewinnauszahlung von ${money(d)} wurde abgelehnt: ${text(d.reason)}.`,
      },
    },
    shows: payoutShown,
    mail: { template: 'payout_rejected', data: (d) => ({ ...moneyMail(d), reason: text(d.reason) }) },
  },
  'order.closed': {
    words: {
      en: {
        title: 'Position closed',
        body: (d) =>
          `Your ${text(d.symbol)} position #${text(d.order)} on account ${text(d.login)} was closed ` +
          `${d.close_reason === 'stop_out' ? 'at stop-out' : 'by the dealing desk'} at ${text(d.close_price)}; profit ${text(d.profit)}.`,
      },
      de: {
        title: 'Position geschlossen',
        body: (d) =>
          `Ihre ${text(d.symbol)}-Position #${text(d.order)} auf Konto ${text(d.login)} wurde ` +
          `${d.close_reason === 'stop_out' ? 'beim Stop-out' : 'vom Handelsdesk'} zu ${text(d.close_price)} geschlossen; Gewinn ${text(d.profit)}.`,
      },
    },
    shows: fields(...viewFields(OrderSchema)),
  },
  'transfer.completed': {
    words: {
      en: {
        title: 'Transfer completed',
        body: (d) =>
          `${text(d.amount)} ${text(d.from_currency)} moved from account ${text(d.from_login)} to account ${text(d.to_login)}` +
          ` (${text(d.converted_amount)} ${text(d.to_currency)}).`,
      },
      de: {
        title: 'Übertrag ausgeführt',
        body: (d) =>
          `${text(d.amount)} ${text(d.from_currency)} wurden von Konto ${text(d.from_login)} auf Konto ${text(d.to_login)} übertragen` +
          ` (${text(d.converted_amount)} ${text(d.to_currency)}).`,
      },
    },
    shows: fields(...viewFields(TransferSchema), 'created_at'),
  },
  'account.margin_call': {
    words: {
      en: {
        title: 'Margin call',
        body: (d) => `The margin level of your account ${text(d.login)} fell to ${text(d.margin_level)} %.`,
      },
      de: {
        title: 'Margin Call',
        body: (d) => `Das Margin-Level Ihres Kontos ${text(d.login)} ist auf ${text(d.margin_level)} % gefallen.`,
      },
    },
    shows: fields(...accountShown, 'margin_call_level'),
    mail: { template: 'margin_call', data: (d) => ({ login: text(d.login), margin_level: text(d.margin_level) }) },
  },
  // Never the message itself: a reply may hold what a mailbox should not keep; the customer reads it in the portal.
  'conversation.message_added': {
    words: {
      en: { title: 'Support answered', body: (d) => `Support answered in your conversation "${text(d.subject)}".` },
      de: {
        title: 'Antwort vom Support',
        body: (d) => `Der Support hat in Ihrer Unterhaltung „${text(d.subject)}“ geantwortet.`,
      },
    },
    shows: fields('conversation_id', 'subject'),
    mail: {
      template: 'conversation_reply',
      data: (d, _language, links) => ({
        subject: text(d.subject),
        conversation_url: `${(links ?? NO_LINKS).supportConversationUrl.replace(/\/+$/, '')}/${encodeURIComponent(text(d.conversation_id))}`,
      }),
    },
  },
  'document.approved': {
    words: {
      en: {
        title: 'Document approved',
        body: (d) => `Your document ${text(d.file_name)} (${term('en', 'document', d.type)}) is approved.`,
      },
      de: {
        title: 'Dokument akzeptiert',
        body: (d) => `Ihr Dokument ${text(d.file_name)} (${term('de', 'document', d.type)}) wurde akzeptiert.`,
      },
    },
    shows: documentShown,
    mail: { template: 'document_approved', data: documentMail },
  },
  'document.rejected': {
    words: {
      en: {
        title: 'Document rejected',
        body: (d) =>
          `Your document ${text(d.file_name)} (${term('en', 'document', d.type)}) was rejected: ${text(d.reason)}. ` +
          'Please submit a new one.',
      },
      de: {
        title: 'Dokument abgelehnt',
        body: (d) =>
          `Ihr Dokument ${text(d.file_name)} (${term('de', 'document', d.type)}) wurde abgelehnt: ${text(d.reason)}. ` +
          'Bitte reichen Sie ein neues ein.',
      },
    },
    shows: documentShown,
    mail: { template: 'document_rejected', data: (d, language) => ({ ...documentMail(d, language), reason: text(d.reason) }) },
  },
  'customer.verified': {
    words: {
      en: { title: 'Account verified', body: (d) => `Your account is now verified to level ${text(d.verification_level)}.` },
      de: { title: 'Konto verifiziert', body: (d) => `Ihr Konto ist jetzt auf Stufe ${text(d.verification_level)} verifiziert.` },
    },
    shows: fields('verification_level', 'previous_level'),
    mail: { template: 'customer_verified', data: (d) => ({ verification_level: text(d.verification_level) }) },
  },
  // A risk rule's `notify` action: neutral on purpose, a customer is never told its risk class
  // (nor the rule or run that classed it), in the body or the data.
  'account.risk_classified': {
    words: {
      en: {
        title: 'Account review',
        body: (d) => `Your account ${text(d.login)} was reviewed under our trading conditions. Contact us with any questions.`,
      },
      de: {
        title: 'Kontoprüfung',
        body: (d) =>
          `Ihr Konto ${text(d.login)} wurde gemäß unseren Handelsbedingungen geprüft. Bei Fragen wenden Sie sich an uns.`,
      },
    },
    shows: fields('login'),
  },
  'prop.challenge_failed': {
    words: {
      en: {
        title: 'Challenge failed',
        body: (d) => {
          const f = (d.failure ?? {}) as Data;
          return (
            `Phase ${text(d.phase)} of your challenge on account ${text(d.login)} failed (${term('en', 'rule', f.rule)}: equity ` +
            `${text(f.equity)}, threshold ${text(f.threshold)}). Its positions are closed and it no longer trades.`
          );
        },
      },
      de: {
        title: 'Challenge nicht bestanden',
        body: (d) => {
          const f = (d.failure ?? {}) as Data;
          return (
            `Phase ${text(d.phase)} Ihrer Challenge auf Konto ${text(d.login)} ist nicht bestanden (${term('de', 'rule', f.rule)}: Equity ` +
            `${text(f.equity)}, Schwelle ${text(f.threshold)}). Die Positionen sind geschlossen, das Konto handelt nicht mehr.`
          );
        },
      },
    },
    shows: fields(...viewFields(ChallengeSchema, ['customer_id', 'program_id'])),
    mail: {
      template: 'prop_challenge_failed',
      data: (d, language) => {
        const f = (d.failure ?? {}) as Data;
        return {
          login: text(d.login),
          phase: text(d.phase),
          rule: term(language, 'rule', f.rule),
          threshold: text(f.threshold),
          equity: text(f.equity),
        };
      },
    },
  },
  'prop.challenge_passed': {
    words: {
      en: {
        title: 'Challenge phase passed',
        body: (d) =>
          `You passed phase ${text(d.phase)} on account ${text(d.login)}. Your next stage trades on account ${text(d.next_login)}.`,
      },
      de: {
        title: 'Challenge-Phase bestanden',
        body: (d) =>
          `Sie haben Phase ${text(d.phase)} auf Konto ${text(d.login)} bestanden. Ihre nächste Stufe handelt auf Konto ${text(d.next_login)}.`,
      },
    },
    shows: fields(...viewFields(ChallengeSchema, ['customer_id', 'program_id']), 'next_login', 'next_status'),
    mail: {
      template: 'prop_challenge_passed',
      data: (d) => ({ login: text(d.login), phase: text(d.phase), next_login: text(d.next_login) }),
    },
  },
  'account.stop_out': {
    words: {
      en: {
        title: 'Stop-out',
        body: (d) => `Positions of your account ${text(d.login)} were closed at the stop-out level.`,
      },
      de: {
        title: 'Stop-out',
        body: (d) => `Positionen Ihres Kontos ${text(d.login)} wurden beim Stop-out-Level geschlossen.`,
      },
    },
    shows: fields(...accountShown, 'stopout_level', 'closed_orders'),
  },
  'account.negative_balance_compensated': {
    words: {
      en: {
        title: 'Negative balance covered',
        body: (d) =>
          `The stop-out left your account ${text(d.login)} at ${text(d.balance_before)} ${text(d.currency)}: ` +
          `we covered it with ${text(d.amount)}, and the balance is 0.`,
      },
      de: {
        title: 'Negativer Saldo ausgeglichen',
        body: (d) =>
          `Der Stop-out hat Ihr Konto ${text(d.login)} auf ${text(d.balance_before)} ${text(d.currency)} gebracht: ` +
          `wir haben ${text(d.amount)} gutgeschrieben, der Saldo ist 0.`,
      },
    },
    shows: fields('login', 'currency', 'balance', 'amount', 'balance_before', 'closed_orders'),
  },
  'bonus.granted': {
    words: {
      en: {
        title: 'Bonus granted',
        body: (d) =>
          `A bonus of ${text(d.amount)} is now credit on your account ${text(d.login)}. ` +
          `Trade ${text(d.lots_required)} lots to turn it into balance.`,
      },
      de: {
        title: 'Bonus gutgeschrieben',
        body: (d) =>
          `Ein Bonus von ${text(d.amount)} ist jetzt Kredit auf Ihrem Konto ${text(d.login)}. ` +
          `Handeln Sie ${text(d.lots_required)} Lots, um ihn in Guthaben umzuwandeln.`,
      },
    },
    shows: bonusShown,
  },
  'bonus.completed': {
    words: {
      en: {
        title: 'Bonus released',
        body: (d) => `Your bonus of ${text(d.amount)} on account ${text(d.login)} is fully released to your balance.`,
      },
      de: {
        title: 'Bonus freigegeben',
        body: (d) => `Ihr Bonus von ${text(d.amount)} auf Konto ${text(d.login)} ist vollständig Ihrem Guthaben gutgeschrieben.`,
      },
    },
    shows: bonusShown,
  },
  'bonus.expired': {
    words: {
      en: {
        title: 'Bonus expired',
        body: (d) => `Your bonus on account ${text(d.login)} has expired: ${text(d.credit_removed)} of credit was removed.`,
      },
      de: {
        title: 'Bonus abgelaufen',
        body: (d) => `Ihr Bonus auf Konto ${text(d.login)} ist abgelaufen: ${text(d.credit_removed)} Kredit wurden entfernt.`,
      },
    },
    shows: bonusShown,
  },
  'bonus.forfeited': {
    words: {
      en: {
        title: 'Bonus forfeited',
        body: (d) => `${text(d.credit_removed)} of bonus credit was removed from your account ${text(d.login)}.`,
      },
      de: {
        title: 'Bonus verfallen',
        body: (d) => `${text(d.credit_removed)} Bonuskredit wurden von Ihrem Konto ${text(d.login)} entfernt.`,
      },
    },
    shows: bonusShown,
  },
  'ib.reward_paid': {
    words: {
      en: {
        title: 'Partner reward paid',
        body: (d) => `${money(d)} of partner rewards arrived in your wallet ${text(d.login)}.`,
      },
      de: {
        title: 'Partnerprovision ausgezahlt',
        body: (d) => `${money(d)} Partnerprovision sind in Ihrer Wallet ${text(d.login)} eingegangen.`,
      },
    },
    shows: fields('partner_id', 'login', 'amount', 'currency', 'accruals', 'trading_date', 'ticket'),
  },
  'ib.reward_reversed': {
    words: {
      en: {
        title: 'Partner rewards reversed',
        body: (d) => `${money(d)} of partner rewards was taken back from your wallet ${text(d.login)}.`,
      },
      de: {
        title: 'Partnerprovision zurückgebucht',
        body: (d) => `${money(d)} Partnerprovision wurden von Ihrer Wallet ${text(d.login)} zurückgebucht.`,
      },
    },
    shows: fields('partner_id', 'login', 'amount', 'currency', 'accruals', 'reason'),
  },
};
