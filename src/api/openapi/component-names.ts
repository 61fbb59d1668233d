import { z } from 'zod';
import type { ComponentNames } from './components/component-list';
import { FRAUD_COMPONENTS } from './components/fraud';
import { PAYMENT_COMPONENTS } from './components/payments';
import { PARTNER_COMPONENTS } from './components/partners';
import { AccountSchema } from '../../domain/accounts/account-view';
import { CreditChangeSchema } from '../../domain/bonuses/credit';
import { BonusSchema } from '../../domain/bonuses/bonuses';
import { BonusProgramSchema } from '../../domain/bonuses/bonus-programs';
import { CampaignSchema, PromoCodeSchema, PromoPreviewSchema, RedemptionSchema } from '../../domain/bonuses/promo-codes';
import { AuditSchema } from '../../domain/audit/audit';
import { CustomerSchema } from '../../domain/customers/customers';
import { DocumentSchema, StaffDocumentSchema } from '../../domain/compliance/documents';
import { VerificationLevelSchema } from '../../domain/compliance/verification-levels';
import { ResetRequestedSchema } from '../../domain/identity/password-reset';
import { GroupSchema } from '../../domain/groups/group-terms';
import { ApiTokenSchema, IssuedApiTokenSchema } from '../../domain/identity/api-tokens';
import { AssignmentSettingsSchema, SettingsSchema } from '../../domain/identity/broker-settings';
import { TotpRequiredSchema } from '../../domain/identity/login';
import { PermissionSchema } from '../../domain/identity/permissions';
import { SessionSchema, TokenPairSchema } from '../../domain/identity/sessions';
import { RoleSchema, StaffUserSchema } from '../../domain/identity/staff';
import { BackupCodesSchema, TotpSetupSchema } from '../../domain/identity/totp';
import { CustomerGroupTermsSchema, CustomerInstrumentSchema } from '../../domain/instruments/customer-instruments';
import { GroupInstrumentSchema, InstrumentSchema } from '../../domain/instruments/instruments';
import { LedgerSchema } from '../../domain/ledger/ledger';
import { EmailTemplateSchema, PreviewSchema } from '../../domain/mail/email-templates';
import { DepositSchema } from '../../domain/money/deposits';
import { TransactionSchema } from '../../domain/money/transactions';
import { TransferSchema } from '../../domain/money/transfers';
import { WithdrawalDetailSchema, WithdrawalRequestResultSchema, WithdrawalSchema } from '../../domain/money/withdrawals';
import { NotificationListSchema, NotificationSchema } from '../../domain/notifications/notifications';
import { BulkCloseAcceptedSchema, BulkCloseResultSchema } from '../../domain/orders/bulk-close';
import { OrderSchema } from '../../domain/orders/order-view';
import { PendingOrderSchema } from '../../domain/orders/pending-orders';
import { QuoteBoardItemSchema } from '../../domain/prices/quote-board';
import { QuoteSchema } from '../../domain/prices/quote-store';
import { RandomWalkSchema } from '../../domain/prices/random-walk';
import {
  ChallengeDetailSchema,
  ChallengeFailureSchema,
  ChallengeLimitsSchema,
  ChallengeRulesSchema,
  ChallengeSchema,
  ChallengeStageSchema,
} from '../../domain/prop/challenges';
import { PayoutSchema } from '../../domain/prop/payouts';
import { PhaseSchema, ProgramSchema } from '../../domain/prop/programs';
import { QueueJobSchema, QueueSummarySchema } from '../../domain/queues/queue-admin';
import { ReportAcceptedSchema, ReportSchema } from '../../domain/reports/reports';
import { TeamSchema } from '../../domain/teams/teams';
import { TaskSchema } from '../../domain/tasks/tasks';
import { TaskRuleSchema } from '../../domain/tasks/task-rules';
import { AssignmentSchema } from '../../domain/teams/assignment';
import { RiskPreviewResultSchema, RiskRunAcceptedSchema } from '../../domain/risk/preview';
import { DailySnapshotSchema } from '../../domain/eod/daily-snapshot';
import { EodRunAcceptedSchema, EodRunSchema } from '../../domain/eod/eod-runs';
import { RiskApplyRunSchema, RiskRuleSchema } from '../../domain/risk/rules';
import { StreamTicketSchema } from '../../domain/streams/stream-views';
import { DeliverySchema, RedeliverResultSchema } from '../../domain/webhooks/deliveries';
import { WebhookSchema, WebhookTestResultSchema } from '../../domain/webhooks/webhooks';

/**
 * The names of the domain's objects in the OpenAPI document (`components.schemas`), so a
 * generated client has an `Order` type rather than one anonymous type per operation. Kept
 * here, beside the document, rather than on each schema: the domain modules stay free of
 * documentation concerns, and one table shows every name. A schema may carry a hand-written
 * example where the house vocabulary (example-values.ts) would not tell a coherent story
 * (a buy's stop below its price, a transfer's rate matching its amounts).
 *
 * A new answer object must be named here: the OpenAPI example test refuses an answer whose
 * schema holds an unnamed object below its top level.
 */
const WITHDRAWAL = {
  id: '4b481c9c-4cd2-4860-a1d2-48ccbbfc34d7',
  login: 5001200,
  amount: '250.00',
  currency: 'USD',
  status: 'completed',
  reason: null,
  comment: 'To my bank account',
  created_at: '2026-03-12T09:41:27.512Z',
  decided_at: '2026-03-12T13:20:05.833Z',
};

const DOCUMENT = {
  id: '6a0f3d2c-9b1e-4f7a-8c25-d4e6b8a0c1f3',
  type: 'identity',
  status: 'pending',
  file_name: 'passport.pdf',
  content_type: 'application/pdf',
  size: 482113,
  created_at: '2026-03-12T09:41:27.512Z',
  reason: null,
};

const PHASE_1 = {
  name: 'Evaluation',
  profit_target_pct: 8,
  max_daily_loss_pct: 5,
  max_total_loss_pct: 10,
  total_loss_mode: 'static',
  min_trading_days: 4,
  max_trading_days: 30,
};

const FAILURE = {
  rule: 'daily_loss',
  threshold: '95000.00',
  equity: '94987.20',
  balance: '99120.00',
  at: '2026-03-12T14:05:03.118Z',
};

const CHALLENGE = {
  id: '9d2c4b1a-7e6f-4a3b-8c2d-1e0f9a8b7c6d',
  program_id: '0f3a8f7e-52c1-4b0e-9a51-6f1b7d1c2e90',
  customer_id: '3b2a1c0d-9e8f-4a7b-b6c5-d4e3f2a1b0c9',
  phase: 1,
  status: 'failed',
  login: 5001240,
  day_start_equity: '100000.00',
  high_water_mark: '101250.40',
  trading_days: 3,
  failure: FAILURE,
  created_at: '2026-03-09T10:12:44.301Z',
};

// The rules of PHASE_1 on a 100,000 program, and the floors they give the failed stage above.
const CHALLENGE_RULES = {
  initial_balance: '100000.00',
  profit_target_pct: 8,
  max_daily_loss_pct: 5,
  max_total_loss_pct: 10,
  total_loss_mode: 'static',
  min_trading_days: 4,
  max_trading_days: 30,
  ends_at: '2026-04-08T10:12:44.301Z',
};

const CHALLENGE_LIMITS = {
  daily_loss_floor: '95000.00',
  total_loss_floor: '90000.00',
  profit_target_balance: '108000.00',
};

const CHALLENGE_STAGE = {
  id: '9d2c4b1a-7e6f-4a3b-8c2d-1e0f9a8b7c6d',
  phase: 1,
  status: 'failed',
  login: 5001240,
  created_at: '2026-03-09T10:12:44.301Z',
};

const NAMES: ComponentNames = [
  [PhaseSchema, 'PropPhase', PHASE_1],
  [
    ProgramSchema,
    'PropProgram',
    {
      id: '0f3a8f7e-52c1-4b0e-9a51-6f1b7d1c2e90',
      name: '100k two-step',
      currency: 'USD',
      initial_balance: '100000.00',
      group_id: '6a1f0b5e-2c3d-4e5f-8a9b-0c1d2e3f4a5b',
      profit_split_pct: 80,
      phases: [PHASE_1, { ...PHASE_1, name: 'Verification', profit_target_pct: 5, min_trading_days: 4, max_trading_days: 60 }],
      created_at: '2026-03-01T08:00:00.000Z',
    },
  ],
  [ChallengeFailureSchema, 'PropChallengeFailure', FAILURE],
  [ChallengeSchema, 'PropChallenge', CHALLENGE],
  [ChallengeRulesSchema, 'PropChallengeRules', CHALLENGE_RULES],
  [ChallengeLimitsSchema, 'PropChallengeLimits', CHALLENGE_LIMITS],
  [ChallengeStageSchema, 'PropChallengeStage', CHALLENGE_STAGE],
  [
    ChallengeDetailSchema,
    'PropChallengeDetail',
    { ...CHALLENGE, rules: CHALLENGE_RULES, limits: CHALLENGE_LIMITS, stages: [CHALLENGE_STAGE] },
  ],
  [
    OrderSchema,
    'Order',
    {
      order: 100234,
      login: 5001234,
      symbol: 'EURUSD',
      cmd: 0,
      volume: 0.1,
      open_price: 1.08425,
      sl: 1.0805,
      tp: 1.0905,
      comment: 'Placed from the web terminal',
      status: 'closed',
      opened_at: '2026-03-12T09:41:27.512Z',
      closed_at: '2026-03-12T14:05:03.118Z',
      close_price: 1.08612,
      profit: '18.70',
      close_reason: 'manual',
      trailing_stop: null,
      commission: '-0.70',
      swap: '-0.42',
    },
  ],
  [
    PendingOrderSchema,
    'PendingOrder',
    {
      order: 100241,
      request_id: '4d2b7e91-0c3a-4f6d-8e15-9a7c2b5d3f08',
      login: 5001234,
      symbol: 'EURUSD',
      cmd: 2,
      volume: 0.5,
      trigger_price: 1.082,
      sl: 1.0785,
      tp: 1.088,
      expiry_at: '2026-03-13T21:00:00.000Z',
      comment: 'Buy the dip',
      status: 'pending',
      created_at: '2026-03-12T09:44:10.301Z',
      triggered_at: null,
      filled_order: null,
      limit_price: null,
      trailing_stop: null,
      cancel_reason: null,
    },
  ],
  [QuoteSchema, 'Quote', { symbol: 'EURUSD', bid: 1.08412, ask: 1.08425, updated_at: '2026-03-12T09:41:27.204Z' }],
  [
    TransferSchema,
    'TransferResult',
    {
      transfer_out_id: 'b1e6f3a2-8c47-4d19-a5e0-7f2c9d4b6a13',
      transfer_in_id: 'c7d2a9e4-1f58-4b3c-9e06-2a8f5b1d7c49',
      from_login: '5001234',
      to_login: '5001235',
      amount: 250,
      from_currency: 'EUR',
      to_currency: 'USD',
      converted_amount: 270.31,
      status: 'completed',
      source: 'EURUSD',
      effective_rate: 1.08124,
    },
  ],
  [
    BulkCloseResultSchema,
    'BulkCloseRun',
    {
      id: '2f0c7a3e-5d1b-4c8e-9a64-7b3e1d5f0c92',
      status: 'completed',
      login: 5001234,
      comment: 'Closed before the ECB rate decision',
      closed: [100234, 100236],
      failed: [{ ticket: 100237, reason: 'PRICE_UNAVAILABLE' }],
      created_at: '2026-03-12T11:59:58.004Z',
      completed_at: '2026-03-12T11:59:58.911Z',
    },
  ],
  [BulkCloseAcceptedSchema, 'BulkCloseAccepted'],
  [GroupSchema, 'Group'],
  [GroupInstrumentSchema, 'GroupInstrument'],
  [InstrumentSchema, 'Instrument'],
  [RandomWalkSchema, 'RandomWalk'],
  [CustomerSchema, 'Customer'],
  [DocumentSchema, 'CustomerDocument', { ...DOCUMENT }],
  [
    StaffDocumentSchema,
    'CustomerDocumentReview',
    {
      ...DOCUMENT,
      status: 'rejected',
      reason: 'The photo page is cut off: submit the whole page',
      customer_id: '1e38d67d-be8f-47d2-a4e0-ba9ff270b34e',
      decided_at: '2026-03-12T13:20:05.833Z',
      decided_by: 'a29641a2-e7cc-44e9-a1fd-8f6550c08608',
    },
  ],
  [
    VerificationLevelSchema,
    'VerificationLevel',
    {
      level: 2,
      required_documents: ['identity', 'address'],
      can_trade: true,
      can_withdraw: true,
      max_deposit_per_day: '50000.00',
      max_withdrawal_per_day: '10000.00',
      max_withdrawal_per_month: '50000.00',
      updated_at: '2026-03-01T08:00:00.000Z',
    },
  ],
  [AccountSchema, 'Account'],
  [DepositSchema, 'Deposit'],
  [CreditChangeSchema, 'CreditChange'],
  [BonusSchema, 'Bonus'],
  [BonusProgramSchema, 'BonusProgram'],
  [CampaignSchema, 'Campaign'],
  [PromoCodeSchema, 'PromoCode'],
  [RedemptionSchema, 'PromoRedemption'],
  [PromoPreviewSchema, 'PromoPreview'],
  [LedgerSchema, 'LedgerEntry'],
  [TransactionSchema, 'Transaction'],
  [WithdrawalSchema, 'Withdrawal', { ...WITHDRAWAL }],
  [
    WithdrawalDetailSchema,
    'WithdrawalDetail',
    {
      ...WITHDRAWAL,
      customer_id: '1e38d67d-be8f-47d2-a4e0-ba9ff270b34e',
      decided_by: 'a29641a2-e7cc-44e9-a1fd-8f6550c08608',
      payment_data: { iban: 'DE89370400440532013000', holder: 'Anna Keller' },
      review_reason: null,
    },
  ],
  [WithdrawalRequestResultSchema, 'WithdrawalRequested'],
  [
    PayoutSchema,
    'Payout',
    {
      id: '9c4e2b7a-1d3f-4a6e-8b05-3f7d9e1c2a64',
      login: 7002417,
      amount: '1840.00',
      currency: 'USD',
      status: 'approved',
      reason: null,
      created_at: '2026-03-31T16:02:11.540Z',
      decided_at: '2026-04-01T08:15:42.077Z',
      decided_by: 'a29641a2-e7cc-44e9-a1fd-8f6550c08608',
    },
  ],
  [WebhookSchema, 'Webhook'],
  [WebhookTestResultSchema, 'WebhookTestQueued'],
  [DeliverySchema, 'WebhookDelivery'],
  [RedeliverResultSchema, 'RedeliveryQueued'],
  [NotificationSchema, 'Notification'],
  [NotificationListSchema, 'NotificationPage'],
  [StaffUserSchema, 'StaffUser'],
  [TeamSchema, 'Team'],
  [TaskSchema, 'Task'],
  [TaskRuleSchema, 'TaskRule'],
  [AssignmentSchema, 'CustomerAssignment'],
  [AssignmentSettingsSchema, 'AssignmentSettings'],
  [RoleSchema, 'Role'],
  [PermissionSchema, 'Permission'],
  [SettingsSchema, 'BrokerSettings'],
  [AuditSchema, 'AuditEntry'],
  [TokenPairSchema, 'TokenPair'],
  [TotpRequiredSchema, 'TotpRequired'],
  [TotpSetupSchema, 'TotpSetup'],
  [BackupCodesSchema, 'BackupCodes'],
  [SessionSchema, 'Session'],
  [StreamTicketSchema, 'StreamTicket'],
  [ApiTokenSchema, 'ApiToken'],
  [IssuedApiTokenSchema, 'IssuedApiToken'],
  [ResetRequestedSchema, 'PasswordResetRequested'],
  [EmailTemplateSchema, 'EmailTemplate'],
  [PreviewSchema, 'EmailPreview'],
  [
    ReportSchema,
    'Report',
    {
      id: '6f1d2c3b-8a4e-4b7f-9c05-2e3d4f5a6b71',
      type: 'account_statement',
      format: 'pdf',
      status: 'completed',
      rows: 1284,
      bytes: 96512,
      created_at: '2026-03-31T16:02:11.540Z',
      finished_at: '2026-03-31T16:02:14.208Z',
      error: null,
      download_url: '/api/backoffice/reports/6f1d2c3b-8a4e-4b7f-9c05-2e3d4f5a6b71/download',
      scope: {
        data_scope: 'team',
        user_id: 'a29641a2-e7cc-44e9-a1fd-8f6550c08608',
        team_ids: ['5b0f3c1e-2a4d-4e8f-9b6a-7c1d2e3f4a5b'],
      },
    },
  ],
  [
    ReportAcceptedSchema,
    'ReportAccepted',
    {
      id: '6f1d2c3b-8a4e-4b7f-9c05-2e3d4f5a6b71',
      status_url: '/api/backoffice/reports/6f1d2c3b-8a4e-4b7f-9c05-2e3d4f5a6b71',
    },
  ],
  [RiskRuleSchema, 'RiskRule'],
  [RiskPreviewResultSchema, 'RiskPreview'],
  [RiskRunAcceptedSchema, 'RiskRunAccepted'],
  [RiskApplyRunSchema, 'RiskApplyRun'],
  [EodRunSchema, 'EodRun'],
  [EodRunAcceptedSchema, 'EodRunAccepted'],
  [DailySnapshotSchema, 'DailySnapshot'],
  [QueueSummarySchema, 'QueueSummary'],
  [QueueJobSchema, 'QueueJob'],
  [QuoteBoardItemSchema, 'QuoteBoardItem'],
  [CustomerGroupTermsSchema, 'CustomerGroupTerms'],
  [CustomerInstrumentSchema, 'CustomerInstrument'],
];

for (const [schema, id, example] of [...NAMES, ...PAYMENT_COMPONENTS, ...FRAUD_COMPONENTS, ...PARTNER_COMPONENTS]) {
  const own = z.globalRegistry.get(schema) ?? {};
  z.globalRegistry.add(schema, { ...own, id, ...(example === undefined ? {} : { examples: [example] }) });
}
