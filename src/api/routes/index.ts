import type { RouteSpec } from '../http/route';
import { accountRoutes } from './accounts.routes';
import { adminRoutes } from './admin.routes';
import { authRoutes } from './auth.routes';
import { bonusRoutes } from './bonuses.routes';
import { partnerRoutes } from './partners.routes';
import { complianceRoutes } from './compliance.routes';
import { crmRoutes } from './crm.routes';
import { crmLifecycleRoutes } from './crm-lifecycle.routes';
import { conversationRoutes } from './conversations.routes';
import { conversationAttachmentRoutes } from './conversation-attachments.routes';
import { docsRoutes } from './docs.routes';
import { eodRoutes } from './eod.routes';
import { emailTemplateRoutes } from './email-templates.routes';
import { fraudRoutes } from './fraud.routes';
import { groupRoutes } from './groups.routes';
import { instrumentRoutes } from './instruments.routes';
import { integrationRoutes } from './integrations.routes';
import { moneyRoutes } from './money.routes';
import { notificationRoutes } from './notifications.routes';
import { orderRoutes } from './orders.routes';
import { paymentRoutes } from './payments.routes';
import { propRoutes } from './prop.routes';
import { passwordResetRoutes } from './password-reset.routes';
import { queueRoutes } from './queues.routes';
import { quoteRoutes } from './quotes.routes';
import { reportRoutes } from './reports.routes';
import { riskRoutes } from './risk.routes';
import { secretsRoutes } from './secrets.routes';
import { simulatorRoutes } from './simulator.routes';
import { streamRoutes } from './streams.routes';
import { systemRoutes } from './system.routes';
import { taskRoutes } from './tasks.routes';
import { teamRoutes } from './teams.routes';
import { webhookRoutes } from './webhooks.routes';

/** The application's route table: what is mounted, documented and access-checked. */
export const ROUTES: RouteSpec[] = [
  ...systemRoutes,
  ...docsRoutes,
  ...authRoutes,
  ...adminRoutes,
  ...crmRoutes,
  ...crmLifecycleRoutes,
  ...teamRoutes,
  ...taskRoutes,
  ...conversationRoutes,
  ...conversationAttachmentRoutes,
  ...complianceRoutes,
  ...passwordResetRoutes,
  ...emailTemplateRoutes,
  ...groupRoutes,
  ...instrumentRoutes,
  ...simulatorRoutes,
  ...quoteRoutes,
  ...streamRoutes,
  ...accountRoutes,
  ...moneyRoutes,
  ...bonusRoutes,
  ...partnerRoutes,
  ...notificationRoutes,
  ...orderRoutes,
  ...propRoutes,
  ...riskRoutes,
  ...eodRoutes,
  ...queueRoutes,
  ...secretsRoutes,
  ...webhookRoutes,
  ...reportRoutes,
  ...paymentRoutes,
  ...integrationRoutes,
  ...fraudRoutes,
];
