import { FraudCase, FraudEvaluation, FraudList, FraudRule, FraudRulesStamp, FraudSignal } from './fraud.entity';
import { Account } from './account.entity';
import { Bonus } from './bonus.entity';
import { Campaign } from './campaign.entity';
import { PromoCode } from './promo-code.entity';
import { PromoRedemption } from './promo-redemption.entity';
import { BonusProgram } from './bonus-program.entity';
import { BonusTurnover } from './bonus-turnover.entity';
import { ApiToken } from './api-token.entity';
import { AuditEntry } from './audit-entry.entity';
import { BackupCode } from './backup-code.entity';
import { BaseEntity } from './base.entity';
import { BulkCloseItem, BulkCloseRun } from './bulk-close.entity';
import { DevelopmentDataKey } from './development-data-key.entity';
import { DomainEvent } from './domain-event.entity';
import { EmailTemplate } from './email-template.entity';
import { EventInboxEntry } from './event-inbox-entry.entity';
import { IdempotencyRecord } from './idempotency-record.entity';
import { LedgerEntry } from './ledger-entry.entity';
import { Notification } from './notification.entity';
import { Order } from './order.entity';
import { PasswordResetToken } from './password-reset-token.entity';
import { PendingOrder } from './pending-order.entity';
import { Payout } from './payout.entity';
import { Report } from './report.entity';
import { ReportChunk } from './report-chunk.entity';
import { PropChallenge } from './prop-challenge.entity';
import { PropProgram } from './prop-program.entity';
import { RiskRun } from './risk-run.entity';
import { RiskRule } from './risk-rule.entity';
import { RiskRunItem } from './risk-run-item.entity';
import { BrokerSettings } from './broker-settings.entity';
import { Customer } from './customer.entity';
import { IbAccrual, IbPayment, IbPlan, Partner } from './partner.entity';
import { CustomerDocument } from './customer-document.entity';
import { CustomerDocumentFile } from './customer-document-file.entity';
import { Group } from './group.entity';
import { GroupInstrument } from './group-instrument.entity';
import { Instrument } from './instrument.entity';
import { MailMessage } from './mail-message.entity';
import { PrincipalEntity } from './principal.entity';
import { RefreshToken } from './refresh-token.entity';
import { Role } from './role.entity';
import { Session } from './session.entity';
import { StaffUser } from './staff-user.entity';
import { Task, TaskRule, TaskTarget } from './task.entity';
import { Team } from './team.entity';
import { TeamMember } from './team-member.entity';
import { Transfer } from './transfer.entity';
import { VerificationLevel } from './verification-level.entity';
import { Webhook } from './webhook.entity';
import { WebhookAttempt } from './webhook-attempt.entity';
import { WebhookDelivery } from './webhook-delivery.entity';
import { Withdrawal } from './withdrawal.entity';
import { AccountDailySnapshot } from './account-daily-snapshot.entity';
import { DailyStatement } from './daily-statement.entity';
import { EodRun } from './eod-run.entity';
import { EodRunAccount } from './eod-run-account.entity';
import { SwapBooking } from './swap-booking.entity';
import { Integration } from './integration.entity';
import { DepositIntent } from './deposit-intent.entity';
import { InboundCall } from './inbound-call.entity';
import { PendingRegistration } from './pending-registration.entity';
import { CustomerNote } from './customer-note.entity';
import { Conversation } from './conversation.entity';
import { ConversationMessage } from './conversation-message.entity';
import { ConversationAttachment } from './conversation-attachment.entity';
import { ConversationAttachmentFile } from './conversation-attachment-file.entity';
import { SalesStatus } from './sales-status.entity';

/** Every entity the ORM knows. Listed explicitly: no folder scanning at start-up. */
export const ENTITIES = [
  BaseEntity,
  PrincipalEntity,
  MailMessage,
  EmailTemplate,
  Role,
  StaffUser,
  Team,
  TeamMember,
  Task,
  TaskRule,
  TaskTarget,
  Customer,
  Session,
  RefreshToken,
  PasswordResetToken,
  BackupCode,
  ApiToken,
  BrokerSettings,
  AuditEntry,
  Group,
  Instrument,
  GroupInstrument,
  Account,
  BonusProgram,
  Bonus,
  BonusTurnover,
  Campaign,
  PromoCode,
  PromoRedemption,
  LedgerEntry,
  Order,
  PendingOrder,
  DomainEvent,
  EventInboxEntry,
  BulkCloseRun,
  BulkCloseItem,
  IdempotencyRecord,
  Transfer,
  Withdrawal,
  Payout,
  PropProgram,
  PropChallenge,
  RiskRun,
  RiskRule,
  RiskRunItem,
  Webhook,
  WebhookDelivery,
  WebhookAttempt,
  Notification,
  DevelopmentDataKey,
  VerificationLevel,
  CustomerDocument,
  CustomerDocumentFile,
  Report,
  ReportChunk,
  EodRun,
  EodRunAccount,
  SwapBooking,
  AccountDailySnapshot,
  DailyStatement,
  Integration,
  DepositIntent,
  InboundCall,
  FraudList,
  FraudRule,
  FraudSignal,
  FraudEvaluation,
  FraudCase,
  FraudRulesStamp,
  PendingRegistration,
  CustomerNote,
  Conversation,
  ConversationMessage,
  ConversationAttachment,
  ConversationAttachmentFile,
  SalesStatus,
  IbPlan,
  Partner,
  IbAccrual,
  IbPayment,
];
