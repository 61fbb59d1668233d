import { CallbackAnswerSchema } from '../../../domain/payments/callbacks';
import { InboundSchema } from '../../../domain/payments/inbound-log';
import {
  DepositIntentSchema,
  DepositReviewSchema,
  PaidSchema,
  StaffDepositSchema,
} from '../../../domain/payments/deposit-intents';
import { PaymentMethodSchema } from '../../../domain/payments/integrations';
import { IntegrationSchema, ProviderFeeSchema, ProviderSchema } from '../../../domain/payments/integration-views';
import { SimulatedCallbackSchema } from '../../../domain/payments/simulator-psp';
import { EventFeedSchema, FeedEventSchema } from '../../../domain/streams/event-feed';
import type { ComponentNames } from './component-list';

const PROVIDER_ID = '0b5f8e1e-6f3c-4f5e-9d43-2a8f7b7f2c11';
const INTENT_ID = '6e1c2b7a-3f4d-4b8e-9a51-0c2d3e4f5a6b';
const FEE = { type: 'percent', value: '1.5', borne_by: 'broker' };
const INTENT = {
  id: INTENT_ID,
  provider_id: PROVIDER_ID,
  status: 'completed',
  amount: '250.00',
  currency: 'USD',
  login: 5001200,
  redirect_url: 'https://pay.acme-psp.example/checkout?intent_id=6e1c2b7a-3f4d-4b8e-9a51-0c2d3e4f5a6b',
  external_id: 'pay_9f2c1a',
  credited_amount: '250.00',
  reason: null,
  expires_at: '2026-03-12T10:11:27.512Z',
  created_at: '2026-03-12T09:41:27.512Z',
  updated_at: '2026-03-12T09:44:02.130Z',
};
const REVIEW = { expected: { amount: '250.00', currency: 'USD' }, received: { amount: '240.00', currency: 'USD' } };
const EVENT = {
  id: '5c7e2a91-4b3d-4f0e-8a62-1d9c3b7e5f04',
  type: 'deposit.completed',
  sequence: 48213,
  created_at: '2026-03-12T09:44:02.130Z',
  data: { id: INTENT_ID, login: 5001200, amount: '250.00', currency: 'USD', balance: '10250.00' },
};

/** Payment providers, deposit intents, the inbound log and the CRM event feed. */
export const PAYMENT_COMPONENTS: ComponentNames = [
  [ProviderFeeSchema, 'ProviderFee', FEE],
  [
    ProviderSchema,
    'PaymentProvider',
    {
      id: PROVIDER_ID,
      name: 'Acme Pay',
      kind: 'psp',
      adapter: 'generic_hmac',
      currencies: ['USD', 'EUR'],
      min_amount: '10.00',
      max_amount: '10000.00',
      fee: FEE,
      allowed_ips: ['203.0.113.0/24'],
      payment_page_url: 'https://pay.acme-psp.example/checkout',
      enabled: true,
      callback_url: `/api/integrations/payments/${PROVIDER_ID}/callbacks`,
      previous_secret_expires_at: null,
      created_at: '2026-03-01T08:00:00.000Z',
      updated_at: '2026-03-01T08:00:00.000Z',
    },
  ],
  [
    PaymentMethodSchema,
    'PaymentMethod',
    {
      provider_id: PROVIDER_ID,
      name: 'Acme Pay',
      adapter: 'generic_hmac',
      currencies: ['USD'],
      min_amount: '10.00',
      max_amount: '10000.00',
      fee: FEE,
    },
  ],
  [DepositIntentSchema, 'DepositIntent', INTENT],
  [PaidSchema, 'PaidAmount', { amount: '240.00', currency: 'USD' }],
  [DepositReviewSchema, 'DepositReview', REVIEW],
  [
    StaffDepositSchema,
    'StaffDeposit',
    {
      ...INTENT,
      status: 'review',
      credited_amount: null,
      customer_id: '1e38d67d-be8f-47d2-a4e0-ba9ff270b34e',
      review: REVIEW,
      decided_at: null,
      decided_by: null,
    },
  ],
  [
    CallbackAnswerSchema,
    'PaymentCallbackResult',
    { outcome: 'processed', inbound_id: '2a9c4e7b-1d3f-4b6e-8c05-7f2d9e1a3b64', deposit_status: 'completed' },
  ],
  [
    SimulatedCallbackSchema,
    'SimulatedPayment',
    {
      intent_id: INTENT_ID,
      external_id: `sim-${INTENT_ID}`,
      callback_status: 200,
      callback_body: { outcome: 'processed', inbound_id: '2a9c4e7b-1d3f-4b6e-8c05-7f2d9e1a3b64', deposit_status: 'completed' },
    },
  ],
  [
    IntegrationSchema,
    'Integration',
    {
      id: PROVIDER_ID,
      kind: 'psp',
      adapter: 'generic_hmac',
      name: 'Acme Pay',
      enabled: true,
      config: { currencies: ['USD'], min_amount: 10, max_amount: 10000, fee: { type: 'none', value: 0, borne_by: 'broker' } },
      last_inbound_at: '2026-03-12T09:44:02.130Z',
      last_error: null,
      previous_secret_expires_at: null,
      created_at: '2026-03-01T08:00:00.000Z',
      updated_at: '2026-03-01T08:00:00.000Z',
    },
  ],
  [
    InboundSchema,
    'InboundCall',
    {
      id: '2a9c4e7b-1d3f-4b6e-8c05-7f2d9e1a3b64',
      integration_id: PROVIDER_ID,
      received_at: '2026-03-12T09:44:02.101Z',
      source_ip: '203.0.113.24',
      signature_valid: true,
      external_id: 'pay_9f2c1a',
      outcome: 'processed',
      error: null,
      body: '{"external_id":"pay_9f2c1a","intent_id":"6e1c2b7a-3f4d-4b8e-9a51-0c2d3e4f5a6b","status":"completed","amount":"250.00","currency":"USD"}',
    },
  ],
  [FeedEventSchema, 'FeedEvent', EVENT],
  [EventFeedSchema, 'EventFeedPage', { items: [EVENT], next_after: '48213' }],
];
