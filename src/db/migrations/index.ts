import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122185420 } from './Migration20261122185420';
import { Migration20261122192311_Identity } from './Migration20261122192311_Identity';

/** Every committed migration, oldest first. `npm run migration:create` writes new ones and lists them here. */ import { Migration20261122193005_GroupsAccounts } from './Migration20261122193005_GroupsAccounts';
import { Migration20261122193400_Trading } from './Migration20261122193400_Trading';
import { Migration20261122194044_Idempotency } from './Migration20261122194044_Idempotency';
import { Migration20261122195900_LedgerNoTruncate } from './Migration20261122195900_LedgerNoTruncate';
import { Migration20261123143034_Hardening } from './Migration20261123143034_Hardening';
import { Migration20261123145431_OutboxRelay } from './Migration20261123145431_OutboxRelay';
import { Migration20261123150838_MailTemplates } from './Migration20261123150838_MailTemplates';
import { Migration20261123155625_Money } from './Migration20261123155625_Money';
import { Migration20261123170334_Payouts } from './Migration20261123170334_Payouts';
import { Migration20261123170348_PasswordReset } from './Migration20261123170348_PasswordReset';
import { Migration20261123170412_Webhooks } from './Migration20261123170412_Webhooks';
import { Migration20261123170854_RiskRuns } from './Migration20261123170854_RiskRuns';
import { Migration20261123171255_EmailTemplates } from './Migration20261123171255_EmailTemplates';
import { Migration20261123171540_Engine } from './Migration20261123171540_Engine';
import { Migration20261123171943_RiskRules } from './Migration20261123171943_RiskRules';
import { Migration20261123172003_Notifications } from './Migration20261123172003_Notifications';
import { Migration20261123173600_WebhookDeliveryStep } from './Migration20261123173600_WebhookDeliveryStep';
import { Migration20261123190500_WebhookPendingIndex } from './Migration20261123190500_WebhookPendingIndex';
import { Migration20261123200000_WebhookStepWaitsForLease } from './Migration20261123200000_WebhookStepWaitsForLease';
import { Migration20261124090000_NotificationRiskData } from './Migration20261124090000_NotificationRiskData';
import { Migration20261125050000_OpenSessionFunction } from './Migration20261125050000_OpenSessionFunction';
import { Migration20261126140000_DevelopmentDataKeys } from './Migration20261126140000_DevelopmentDataKeys';

export const MIGRATIONS: MigrationObject[] = [
  { name: 'Migration20261122185420', class: Migration20261122185420 },
  { name: 'Migration20261122192311_Identity', class: Migration20261122192311_Identity },
  { name: 'Migration20261122193005_GroupsAccounts', class: Migration20261122193005_GroupsAccounts },
  { name: 'Migration20261122193400_Trading', class: Migration20261122193400_Trading },
  { name: 'Migration20261122194044_Idempotency', class: Migration20261122194044_Idempotency },
  { name: 'Migration20261122195900_LedgerNoTruncate', class: Migration20261122195900_LedgerNoTruncate },
  { name: 'Migration20261123143034_Hardening', class: Migration20261123143034_Hardening },
  { name: 'Migration20261123145431_OutboxRelay', class: Migration20261123145431_OutboxRelay },
  { name: 'Migration20261123150838_MailTemplates', class: Migration20261123150838_MailTemplates },
  { name: 'Migration20261123155625_Money', class: Migration20261123155625_Money },
  { name: 'Migration20261123170334_Payouts', class: Migration20261123170334_Payouts },
  { name: 'Migration20261123170348_PasswordReset', class: Migration20261123170348_PasswordReset },
  { name: 'Migration20261123170412_Webhooks', class: Migration20261123170412_Webhooks },
  { name: 'Migration20261123170854_RiskRuns', class: Migration20261123170854_RiskRuns },
  { name: 'Migration20261123171255_EmailTemplates', class: Migration20261123171255_EmailTemplates },
  { name: 'Migration20261123171540_Engine', class: Migration20261123171540_Engine },
  { name: 'Migration20261123171943_RiskRules', class: Migration20261123171943_RiskRules },
  { name: 'Migration20261123172003_Notifications', class: Migration20261123172003_Notifications },
  { name: 'Migration20261123173600_WebhookDeliveryStep', class: Migration20261123173600_WebhookDeliveryStep },
  { name: 'Migration20261123190500_WebhookPendingIndex', class: Migration20261123190500_WebhookPendingIndex },
  { name: 'Migration20261123200000_WebhookStepWaitsForLease', class: Migration20261123200000_WebhookStepWaitsForLease },
  { name: 'Migration20261124090000_NotificationRiskData', class: Migration20261124090000_NotificationRiskData },
  { name: 'Migration20261125050000_OpenSessionFunction', class: Migration20261125050000_OpenSessionFunction },
  { name: 'Migration20261126140000_DevelopmentDataKeys', class: Migration20261126140000_DevelopmentDataKeys },
];
