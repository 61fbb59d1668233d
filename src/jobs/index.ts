import type { JobDefinition } from './job-definition';
import { BulkCloseFinishJob, BulkCloseTicketJob } from './bulk-close.job';
import { EngineSweepJob, EngineTickJob } from './engine-tick.job';
import { EodAccountsJob, EodFinishJob, EodStartJob } from './eod.job';
import { ExpirePendingOrdersJob } from './expire-pending-orders.job';
import { ExpireDepositIntentsJob } from './expire-deposit-intents.job';
import { ConversationSlaJob, ResolvePendingConversationsJob, WakeSnoozedConversationsJob } from './conversations.job';
import { NotifyCustomersJob } from './notify-customers.job';
import { OutboxRelayJob } from './outbox-relay.job';
import { PasswordResetJob } from './password-reset.job';
import { ReportBuildJob } from './report-build.job';
import { ReportSweepJob } from './report-sweep.job';
import { PropAfterCloseJob, PropCloseOutJob, PropSweepJob } from './prop-challenges.job';
import { ResealSecretsJob } from './reseal-secrets.job';
import { RetentionJob } from './retention.job';
import { RiskApplyJob, RiskPreviewJob } from './risk.job';
import { SendMailJob } from './send-mail.job';
import { SimulatorTickJob } from './simulator-tick.job';
import { TaskAlertsJob } from './task-alerts.job';
import { WebhookDeliverJob, WebhooksDispatchJob } from './webhooks.job';

/** Every job the system runs. The worker tier refuses to start unless each has exactly one processor. */
export const JOB_DEFINITIONS: JobDefinition[] = [
  SendMailJob,
  TaskAlertsJob,
  SimulatorTickJob,
  BulkCloseTicketJob,
  BulkCloseFinishJob,
  ExpirePendingOrdersJob,
  OutboxRelayJob,
  RiskPreviewJob,
  RiskApplyJob,
  WebhooksDispatchJob,
  WebhookDeliverJob,
  NotifyCustomersJob,
  EngineTickJob,
  EngineSweepJob,
  PasswordResetJob,
  ResealSecretsJob,
  RetentionJob,
  ReportBuildJob,
  ReportSweepJob,
  EodStartJob,
  EodAccountsJob,
  EodFinishJob,
  PropCloseOutJob,
  PropSweepJob,
  PropAfterCloseJob,
  ExpireDepositIntentsJob,
  ResolvePendingConversationsJob,
  WakeSnoozedConversationsJob,
  ConversationSlaJob,
];
