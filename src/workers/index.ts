import type { Processor } from './processor';
import { bulkCloseFinishProcessor, bulkCloseTicketProcessor } from './bulk-close.worker';
import { eodAccountsProcessor, eodFinishProcessor, eodStartProcessor } from './eod.worker';
import { engineSweepProcessor, engineTickProcessor } from './engine-tick.worker';
import { expirePendingOrdersProcessor } from './expire-pending-orders.worker';
import { expireDepositIntentsProcessor } from './expire-deposit-intents.worker';
import { taskAlertsProcessor } from './task-alerts.worker';
import {
  conversationSlaProcessor,
  resolvePendingConversationsProcessor,
  wakeSnoozedConversationsProcessor,
} from './conversations.worker';
import { notifyCustomersProcessor } from './notify-customers.worker';
import { outboxRelayProcessor } from './outbox-relay.worker';
import { reportBuildProcessor } from './report-build.worker';
import { reportSweepProcessor } from './report-sweep.worker';
import { passwordResetProcessor } from './password-reset.worker';
import { propAfterCloseProcessor, propCloseOutProcessor, propSweepProcessor } from './prop-challenges.worker';
import { resealSecretsProcessor } from './reseal-secrets.worker';
import { retentionProcessor } from './retention.worker';
import { riskApplyProcessor, riskPreviewProcessor } from './risk.worker';
import { sendMailProcessor } from './send-mail.worker';
import { simulatorTickProcessor } from './simulator-tick.worker';
import { webhookDeliverProcessor, webhooksDispatchProcessor } from './webhooks.worker';

/** Every processor of the worker tier; checked against JOB_DEFINITIONS at start-up. */
export const PROCESSORS: Processor[] = [
  sendMailProcessor,
  simulatorTickProcessor,
  bulkCloseTicketProcessor,
  bulkCloseFinishProcessor,
  expirePendingOrdersProcessor,
  taskAlertsProcessor,
  outboxRelayProcessor,
  riskPreviewProcessor,
  riskApplyProcessor,
  webhooksDispatchProcessor,
  webhookDeliverProcessor,
  notifyCustomersProcessor,
  engineTickProcessor,
  engineSweepProcessor,
  passwordResetProcessor,
  resealSecretsProcessor,
  retentionProcessor,
  reportBuildProcessor,
  reportSweepProcessor,
  eodStartProcessor,
  eodAccountsProcessor,
  eodFinishProcessor,
  propCloseOutProcessor,
  propSweepProcessor,
  propAfterCloseProcessor,
  expireDepositIntentsProcessor,
  resolvePendingConversationsProcessor,
  wakeSnoozedConversationsProcessor,
  conversationSlaProcessor,
];
