import { CaseReasonSchema, CaseReferenceSchema, FraudCaseSchema } from '../../../domain/fraud/cases';
import { CustomerLinkSchema, EvidenceSchema } from '../../../domain/fraud/links';
import { ConditionSchema, FraudRuleSchema } from '../../../domain/fraud/rules';
import type { ComponentNames } from './component-list';

const CONDITION = { field: 'device.linked_customers', op: 'gte', value: 3 };
const REASON = {
  at: '2026-03-12T09:41:27.512Z',
  event: 'withdrawal',
  reason: 'rule "Shared device" (version 2)',
  evaluation_id: '9c4e1a7b-2d3f-4b6e-8c05-7f2d9e1a3b64',
  reference: { type: 'withdrawal', id: '4b481c9c-4cd2-4860-a1d2-48ccbbfc34d7' },
};
const EVIDENCE = {
  kind: 'device',
  value_masked: 'dev-***91',
  first_seen: '2026-03-01T08:00:00.000Z',
  last_seen: '2026-03-12T09:41:27.512Z',
};

/** Fraud rules, review cases and the links between customers. */
export const FRAUD_COMPONENTS: ComponentNames = [
  [ConditionSchema, 'FraudCondition', CONDITION],
  [
    FraudRuleSchema,
    'FraudRule',
    {
      id: '0d7e5b3a-1c2f-4e6a-9b80-3f4e5a6b7c8d',
      name: 'Shared device',
      event: 'withdrawal',
      match: 'all',
      conditions: [CONDITION],
      action: 'review',
      position: 10,
      enabled: true,
      version: 2,
      builtin: false,
      created_at: '2026-03-01T08:00:00.000Z',
      updated_at: '2026-03-12T09:41:27.512Z',
    },
  ],
  [CaseReferenceSchema, 'FraudCaseReference', REASON.reference],
  [CaseReasonSchema, 'FraudCaseReason', REASON],
  [
    FraudCaseSchema,
    'FraudCase',
    {
      id: '6a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
      customer_id: '1e38d67d-be8f-47d2-a4e0-ba9ff270b34e',
      status: 'open',
      assignee_id: null,
      reasons: [REASON],
      verdict: null,
      actions: null,
      note: null,
      resolved_at: null,
      resolved_by: null,
      created_at: '2026-03-12T09:41:27.512Z',
      updated_at: '2026-03-12T09:41:27.512Z',
    },
  ],
  [EvidenceSchema, 'LinkEvidence', EVIDENCE],
  [CustomerLinkSchema, 'CustomerLink', { ...EVIDENCE, customer_id: '7f3e2d1c-0b9a-4876-a543-210fedcba987', evidence: EVIDENCE }],
];
