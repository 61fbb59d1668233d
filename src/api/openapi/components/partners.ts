import { IbLevelSchema, IbPlanSchema } from '../../../domain/partners/plans';
import { PartnerSchema } from '../../../domain/partners/partners';
import {
  PartnerClientSchema,
  PartnerRewardSchema,
  PartnerSummarySchema,
  PartnerTotalsSchema,
  SubPartnerSchema,
} from '../../../domain/partners/portal';
import type { ComponentNames } from './component-list';

const PLAN_ID = '3b9d7f2e-1c4a-4e8b-a6d5-7f0e2c9b1a34';
const PARTNER_ID = 'c1a2b3d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d';
const PARENT_ID = '9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b';
const LEVELS = [
  { level: 1, value: '50' },
  { level: 2, value: '30' },
  { level: 3, value: '20' },
];
const PLAN = {
  id: PLAN_ID,
  name: 'Three-level commission share',
  currency: 'USD',
  basis: 'commission_pct',
  levels: LEVELS,
  max_per_lot: null,
  group_ids: null,
  symbol_overrides: { XAUUSD: [{ level: 1, value: '40' }] },
  charge: 'daily',
  min_hold_seconds: 60,
  created_at: '2026-03-12T09:41:27.512Z',
};
const TOTALS = { clients: 42, sub_partners: 3, paid: '1284.60', pending: '35.20', on_hold: '0.00', reversed: '12.40' };

/** The partner programmes' components, with their examples. */
export const PARTNER_COMPONENTS: ComponentNames = [
  [IbLevelSchema, 'IbPlanLevel', LEVELS[0]],
  [IbPlanSchema, 'IbPlan', PLAN],
  [
    PartnerSchema,
    'Partner',
    {
      id: PARTNER_ID,
      customer_id: '5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a',
      parent_partner_id: PARENT_ID,
      plan_id: PLAN_ID,
      code: 'ANNA-FX',
      level: 2,
      created_at: '2026-03-12T09:41:27.512Z',
    },
  ],
  [PartnerTotalsSchema, 'PartnerTotals', TOTALS],
  [
    PartnerSummarySchema,
    'PartnerSummary',
    { id: PARTNER_ID, code: 'ANNA-FX', level: 2, parent_partner_id: PARENT_ID, plan: PLAN, totals: TOTALS },
  ],
  [
    PartnerClientSchema,
    'PartnerClient',
    {
      email: 'j***@example.com',
      country: 'DE',
      registered_at: '2026-03-02T08:15:00.000Z',
      ftd_at: '2026-03-03T11:20:41.000Z',
      lots: '14.20',
    },
  ],
  [
    PartnerRewardSchema,
    'PartnerReward',
    {
      id: '7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d',
      ticket: '100482',
      level: 1,
      symbol: 'EURUSD',
      lots: '2.00',
      amount: '3.50',
      currency: 'USD',
      status: 'paid',
      reason: null,
      closed_at: '2026-03-12T09:41:27.512Z',
      paid_at: '2026-03-12T21:00:04.210Z',
    },
  ],
  [
    SubPartnerSchema,
    'SubPartner',
    {
      id: '2f3e4d5c-6b7a-4c8d-9e0f-1a2b3c4d5e6f',
      code: 'MARK-IB',
      parent_partner_id: PARTNER_ID,
      depth: 1,
      clients: 7,
      created_at: '2026-03-05T14:02:11.000Z',
    },
  ],
];
